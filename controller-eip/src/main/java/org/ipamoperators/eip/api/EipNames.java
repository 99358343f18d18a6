package org.ipamoperators.eip.api;

import java.util.List;

/**
 * Every name k8s-eip-operator put on objects, kept as it was so that a cluster it ran is taken over as it is:
 * labels, annotations, finalizers and the tags on the AWS addresses.
 */
public final class EipNames {
  private EipNames() {}

  public static final String GROUP = "materialize.cloud";

  /** Pods and nodes opt in with this label; {@code false} opts out (the old operator managed them anyway). */
  public static final String MANAGE_LABEL = "eip.materialize.cloud/manage";
  /** {@code true} (any case) on a pod: an Eip named after the pod is created for it and deleted with it. */
  public static final String AUTOCREATE_LABEL = "eip.materialize.cloud/autocreate_eip";
  /** On Eips we created for a pod (the old operator's have none: they are recognised by name). */
  public static final String AUTOCREATED_LABEL = "eip.materialize.cloud/autocreated";
  /** On nodes selected by node-mode Eips: {@code true} on those holding an address. */
  public static final String READY_STATUS_LABEL = "egress-gateway.materialize.cloud/ready-status";

  public static final String ALLOCATION_ID_ANNOTATION = "eip.materialize.cloud/allocation_id";
  public static final String EXTERNAL_DNS_TARGET_ANNOTATION = "external-dns.alpha.kubernetes.io/target";
  /** Written by EKS security groups for pods: a JSON list whose first {@code eniId} is the pod's branch ENI. */
  public static final String POD_ENI_ANNOTATION = "vpc.amazonaws.com/pod-eni";

  public static final String EIP_FINALIZER = "eip.materialize.cloud/destroy";
  /** The old operator's pod and node finalizers: we add none, and remove these from terminating objects. */
  public static final List<String> LEGACY_POD_FINALIZERS = List.of("eip.materialize.cloud/disassociate",
      "eip.aws.materialize.com/disassociate");
  public static final String LEGACY_NODE_FINALIZER = "eip.materialize.cloud/disassociate_node";

  public static final String TAG_UID = "eip.materialize.cloud/eip_uid";
  public static final String TAG_NAME = "eip.materialize.cloud/eip_name";
  public static final String TAG_NAMESPACE = "eip.materialize.cloud/namespace";
  public static final String TAG_CLUSTER = "eip.materialize.cloud/cluster_name";
  public static final String TAG_POD = "eip.materialize.cloud/pod_name";
  public static final String TAG_NODE_SELECTOR = "eip.materialize.cloud/node_selector";
  public static final String TAG_NAME_AWS = "Name";
  /** When this controller allocated the address (ISO-8601): duplicates keep the oldest. Not the old operator's. */
  public static final String TAG_ALLOCATED_AT = "eip.materialize.cloud/allocated_at";
  /** Tags {@code DEFAULT_TAGS} may not set: ours. */
  public static final List<String> RESERVED_TAGS = List.of(TAG_UID, TAG_NAME, TAG_NAMESPACE, TAG_CLUSTER, TAG_POD,
      TAG_NODE_SELECTOR, TAG_NAME_AWS, TAG_ALLOCATED_AT);
}
