{{/*
Exactly what each controller's code requests, verb by verb: no wildcard; Secrets only read by name (get), never
listed or watched. The manifest ITs (distribution, *ManifestsIT) run each controller under these rules on an
apiserver that keeps an audit log, and fail on a verb no request used and on a request refused.
*/}}
{{- define "ipam.rules.egressip" -}}
# Opted-in namespaces: read their egressipam annotation (get: once more when a write finds it changed);
# patch: their egressips annotation.
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch, patch]
# Nodes: readiness, topology labels, capacity; patch: OVN-Kubernetes' k8s.ovn.org/egress-assignable label.
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch, patch]
# Events on namespaces and EgressIPAMs, in the namespaces they concern: created, or read and updated
# (count, last time) when the same one recurs.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update]
# The cluster ledger: older versions' IPClaims, honoured while they last and released (delete, with the
# uid and resourceVersion read as preconditions). No new claim is made here.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipclaims]
  verbs: [get, list, watch, delete]
# The block ledger: this controller's addresses, 64 to an IPBlock, written by compare-and-swap (create, update
# with the resourceVersion read; delete of an emptied block with preconditions).
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipblocks]
  verbs: [get, list, watch, create, update, delete]
# EgressIPAMs: patch: the finalizer, added and removed (the cleanup reads the object first: get).
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams]
  verbs: [get, list, watch, patch]
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams/status]
  verbs: [patch]
# Owner references to an EgressIPAM with blockOwnerDeletion (OwnerReferencesPermissionEnforcement, as
# OpenShift enables it): checked at admission, never requested.
- apiGroups: [redhatcop.redhat.io]
  resources: [egressipams/finalizers]
  verbs: [update]
# OpenShift SDN: merge patches conditioned on the resourceVersion read; get: re-read after a conflict.
- apiGroups: [network.openshift.io]
  resources: [hostsubnets, netnamespaces]
  verbs: [get, list, watch, patch]
# OVN-Kubernetes: one EgressIP per namespace, created, updated (with the resourceVersion read; get after a
# conflict) and deleted with preconditions.
- apiGroups: [k8s.ovn.org]
  resources: [egressips]
  verbs: [get, list, watch, create, update, delete]
# OpenShift platform type and infrastructure name: the object "cluster", read by name at start.
- apiGroups: [config.openshift.io]
  resources: [infrastructures]
  verbs: [get]
{{- end -}}

{{- define "ipam.rules.vip" -}}
# LoadBalancer Services: read them (get: before a patch and in the orphan sweep); patch: remove the finalizer
# older versions (and the old operator) put on them, once, and turn a migrated VirtualIP's Service into a
# LoadBalancer; delete: the clone Service the old operator made for a VirtualIP, once that VirtualIP is migrated
# or deleted, and only a Service that VirtualIP owns (owner reference), with its uid as precondition. RBAC cannot
# narrow patch and delete to those Services: they are wherever the Services are.
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
# Events on Services, IPGroups and VirtualIPs, in the namespaces they concern: created, or read and updated
# (count, last time) when the same one recurs.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update]
# The cluster ledger: one IPClaim per address; update: a shared address's member list (with the
# resourceVersion read); delete with preconditions.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipclaims]
  verbs: [get, list, watch, create, update, delete]
# The block ledger, read after each claim: an address with a block entry is taken.
- apiGroups: [ipam.ipamoperators.org]
  resources: [ipblocks]
  verbs: [get, list]
- apiGroups: [paas.org]
  resources: [ipgroups]
  verbs: [list, watch]
- apiGroups: [paas.org]
  resources: [ipgroups/status]
  verbs: [patch]
# The old operator's objects: IP claims adopted at start (relabelled when a VirtualIP migrates: get and patch),
# VirtualIPs migrated on request (patch: their finalizers; status update: the migration's steps; update: the
# same on a VirtualIP definition without the status subresource).
- apiGroups: [paas.org]
  resources: [ips]
  verbs: [get, list, patch]
- apiGroups: [paas.org]
  resources: [virtualips]
  verbs: [get, list, watch, update, patch]
- apiGroups: [paas.org]
  resources: [virtualips/status]
  verbs: [update]
{{- end -}}


{{- define "ipam.rules.keepalived" -}}
# Annotated Services and the nodes a group selects: read from the informers only.
- apiGroups: [""]
  resources: [services, nodes]
  verbs: [list, watch]
# Namespaces a group admits: their labels.
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
{{- if not .Values.controllers.keepalived.trust.allowedNamespaces }}
# The password Secret a group's passwordAuth names, in the group's namespace: read by name (get), and
# read again every few seconds for a rotation. No list, no watch: no other Secret reaches the operator.
# With trust.allowedNamespaces set, a Role in each of those namespaces grants this instead.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
{{- end }}
# Per group: a ConfigMap with each node's keepalived.conf and the DaemonSet that runs keepalived, written
# by server-side apply (a patch; the apiserver also authorizes create when the object does not exist yet)
# and read from the informers.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch, create, patch]
- apiGroups: [apps]
  resources: [daemonsets]
  verbs: [list, watch, create, patch]
# Events on Services and KeepalivedGroups, in the namespaces they concern: created, or read and updated
# (count, last time) when the same one recurs.
- apiGroups: [""]
  resources: [events]
  verbs: [create, get, update]
# The cluster ledger of VRRP router ids: one IDClaim per id and id space (get: after a conflict; update: an id
# retired for a grace period after its Service or group leaves; delete with preconditions).
- apiGroups: [ipam.ipamoperators.org]
  resources: [idclaims]
  verbs: [get, list, watch, create, update, delete]
# KeepalivedGroups: patch: the finalizer, added and removed; get: an orphaned router id's owner.
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups]
  verbs: [get, list, watch, patch]
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups/status]
  verbs: [patch]
# Owner references on the ConfigMap and DaemonSet (OwnerReferencesPermissionEnforcement, as OpenShift
# enables it): checked at admission, never requested.
- apiGroups: [redhatcop.redhat.io]
  resources: [keepalivedgroups/finalizers]
  verbs: [update]
# A PodMonitor per group where the Prometheus Operator's API is served (server-side apply: patch, and create),
# read from an informer that runs while that API is served.
- apiGroups: [monitoring.coreos.com]
  resources: [podmonitors]
  verbs: [list, watch, create, patch]
# Whether that API is served: the CRDs, from an informer.
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [list, watch]
{{- end -}}


{{- define "ipam.rules.eip" -}}
# Pods and nodes labelled eip.materialize.cloud/manage: read them (get: the node of a pod, a pod by name);
# patch the annotations (allocation_id, external-dns target) and node labels (ready-status), and remove the old
# operator's finalizers. No finalizer is added to either.
- apiGroups: [""]
  resources: [pods, nodes]
  verbs: [get, list, watch, patch]
# The orphan sweep runs as a reconcile of the default Namespace (leader only, periodic).
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
# Events on Eips and pods, in the namespaces they concern: created, or read and updated (count, last time)
# when the same one recurs.
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
  verbs: [get, list]
# Eips: create and delete the ones autocreated for pods; patch: the finalizer, and v1 spec.podName moved to v2.
- apiGroups: [materialize.cloud]
  resources: [eips]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [materialize.cloud]
  resources: [eips/status]
  verbs: [patch]
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

{{/*
Namespaces where a controller gets a Role of its own, with "ipam.perNamespaceRules.<controller>": keepalived's
password Secrets, in the namespaces trust.allowedNamespaces names (a group elsewhere is not served). Empty: none
(the ClusterRole grants it).
*/}}
{{- define "ipam.perNamespaces.egressip" -}}[]{{- end -}}
{{- define "ipam.perNamespaces.vip" -}}[]{{- end -}}
{{- define "ipam.perNamespaces.eip" -}}[]{{- end -}}
{{- define "ipam.perNamespaces.keepalived" -}}
{{- .Values.controllers.keepalived.trust.allowedNamespaces | default list | toJson }}
{{- end -}}
{{- define "ipam.perNamespaceRules.keepalived" -}}
# The password Secret a group's passwordAuth names, in this namespace: read by name (get), and read again
# every few seconds for a rotation. No list, no watch.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
{{- end -}}
