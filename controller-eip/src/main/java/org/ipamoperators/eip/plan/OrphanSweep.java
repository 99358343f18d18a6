package org.ipamoperators.eip.plan;

import java.util.List;
import java.util.Set;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;

/**
 * Which addresses found by our cluster tag belong to no Eip any more. An address is released only if it carries
 * our cluster name, a UID tag, (when the operator watches one namespace) our namespace, and its UID is not that of
 * an existing Eip; anything else, untagged or another cluster's or namespace's, is never touched. The Eips must be
 * listed after the addresses: an address is only allocated for an Eip that exists, so an Eip that still exists is
 * in the later list. Pure.
 */
public final class OrphanSweep {
  private OrphanSweep() {}

  public static List<ElasticIp> orphans(List<ElasticIp> found, String cluster, String namespaceOrNull,
      Set<String> liveUids) {
    return found.stream()
        .filter(a -> cluster.equals(a.tag(EipNames.TAG_CLUSTER)))
        .filter(a -> namespaceOrNull == null || namespaceOrNull.equals(a.tag(EipNames.TAG_NAMESPACE)))
        .filter(a -> a.tag(EipNames.TAG_UID) != null && !a.tag(EipNames.TAG_UID).isEmpty())
        .filter(a -> !liveUids.contains(a.tag(EipNames.TAG_UID)))
        .toList();
  }
}
