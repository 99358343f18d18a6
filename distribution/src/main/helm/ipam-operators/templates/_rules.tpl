{{/* Exactly what each controller uses: no wildcard; Secrets only read by name (get), never listed or watched. */}}
{{- define "ipam.rules.egressip" -}}
# Opted-in namespaces: read their egressipam annotation, write their egressips annotation.
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch, update, patch]
# Nodes: readiness, topology labels, capacity; OVN-Kubernetes' k8s.ovn.org/egress-assignable label.
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch, update, patch]
# Events on namespaces and EgressIPAMs, in the namespaces they concern.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update, patch]
# The cluster ledger: one IPClaim per address (older versions' claims, honoured and released).
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipclaims]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
# The block ledger: this controller's addresses, 64 to an IPBlock, written by compare-and-swap.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipblocks]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams]
  verbs: [get, list, watch, update, patch]
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams/status]
  verbs: [get, update, patch]
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams/finalizers]
  verbs: [update]
# OpenShift SDN.
- apiGroups: [network.openshift.io]
  resources: [hostsubnets, netnamespaces]
  verbs: [get, list, watch, update, patch]
# OVN-Kubernetes.
- apiGroups: [k8s.ovn.org]
  resources: [egressips]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
# OpenShift platform type and infrastructure name.
- apiGroups: [config.openshift.io]
  resources: [infrastructures]
  verbs: [get, list, watch]
{{- end -}}

{{- define "ipam.rules.vip" -}}
# LoadBalancer Services: read them; patch: remove the finalizer older versions (and the old
# operator) put on them, once, and migrate a VirtualIP's Service; delete: the clone Service the old
# operator made for a VirtualIP, once that VirtualIP is migrated.
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, patch, delete]
# The allocated addresses go to status.loadBalancer.ingress (one patch, never read first).
- apiGroups: [""]
  resources: [services/status]
  verbs: [patch]
# IPGroups may admit Services by their namespace's labels.
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get]
# Events on Services and IPGroups, in the namespaces they concern.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update, patch]
# The cluster ledger: one IPClaim per address (shared addresses list their member Services).
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipclaims]
  verbs: [get, list, watch, create, update, patch, delete]
# The block ledger, read after each claim: an address with a block entry is taken.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipblocks]
  verbs: [get, list, watch]
- apiGroups: [paas.org]
  resources: [ipgroups]
  verbs: [get, list, watch]
- apiGroups: [paas.org]
  resources: [ipgroups/status]
  verbs: [get, update, patch]
# The old operator's objects: IP claims adopted at start, VirtualIPs migrated on request.
- apiGroups: [paas.org]
  resources: [ips]
  verbs: [get, list, patch]
- apiGroups: [paas.org]
  resources: [virtualips]
  verbs: [get, list, watch, update, patch]
- apiGroups: [paas.org]
  resources: [virtualips/status]
  verbs: [get, update]
{{- end -}}


{{- define "ipam.rules.keepalived" -}}
# Annotated Services, the nodes a group selects, namespaces a group admits: read only.
- apiGroups: [""]
  resources: [services, nodes, namespaces]
  verbs: [get, list, watch]
# The password Secret a group's passwordAuth names, in the group's namespace: read by name (get), and
# read again every few seconds for a rotation. No list, no watch: no other Secret reaches the operator.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
# Per group: a ConfigMap with each node's keepalived.conf and the DaemonSet that runs keepalived.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch]
- apiGroups: [apps]
  resources: [daemonsets]
  verbs: [get, list, watch, create, update, patch]
# Events on Services and KeepalivedGroups, in the namespaces they concern.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update]
# The cluster ledger of VRRP router ids: one IDClaim per id and id space (update: an id retired for a
# grace period after its Service leaves).
- apiGroups: [ipam.ipamoperators.org]
  resources: [idclaims]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups]
  verbs: [get, list, watch, update, patch]
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups/status]
  verbs: [get, update, patch]
# Owner references on the ConfigMap and DaemonSet (OwnerReferencesPermissionEnforcement).
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups/finalizers]
  verbs: [update]
# A PodMonitor per group where the Prometheus Operator's API is served (looked up each reconcile).
- apiGroups: [monitoring.coreos.com]
  resources: [podmonitors]
  verbs: [get, create, update, patch]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [get, list, watch]
{{- end -}}


{{- define "ipam.rules.eip" -}}
# Pods and nodes labelled eip.materialize.cloud/manage: read them; patch the annotations
# (allocation_id, external-dns target) and node labels (ready-status), and remove the old
# operator's finalizers. No finalizer is added to either.
- apiGroups: [""]
  resources: [pods, nodes]
  verbs: [get, list, watch, patch]
# The orphan sweep runs as a reconcile of the default Namespace (leader only, periodic).
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
# Events on Eips and pods, in the namespaces they concern.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update]
# The cluster ledger: one IPClaim per public address (list: the start-up check).
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipclaims]
  verbs: [create, delete, get, list]
# The block ledger, read after each claim: an address with a block entry is taken.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipblocks]
  verbs: [get, list, watch]
# Eips: create and delete the ones autocreated for pods; patch: v1 spec.podName moved to v2.
- apiGroups: [materialize.cloud]
  resources: [eips]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [materialize.cloud]
  resources: [eips/status]
  verbs: [get, update, patch]
{{- end -}}


{{/* Rules in the release's namespace only, beside the leader-election Role; empty for most. */}}
{{- define "ipam.namespacedRules.egressip" -}}
# On AWS: the old egressip-ipam-operator's credentials Secret, by name, if it exists (else the SDK's
# default chain: IRSA, instance profile).
- apiGroups: [""]
  resources: [secrets]
  resourceNames: [egress-ipam-operator-cloud-credentials]
  verbs: [get]
{{- end -}}
{{- define "ipam.namespacedRules.vip" -}}{{- end -}}
{{- define "ipam.namespacedRules.keepalived" -}}{{- end -}}
{{- define "ipam.namespacedRules.eip" -}}{{- end -}}
