package org.ipamoperators.controller.common.ledger;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.Map;
import java.util.TreeMap;

/**
 * The claims of one fixed-size block of addresses (a /26 of IPv4, a /122 of IPv6) in one object,
 * as Calico IPAM keeps its blocks: an address is held when its entry is in the block. Every write
 * is a compare-and-swap on the resourceVersion (or the create of an absent block), so the API
 * server still lets exactly one writer add an entry for an address; what it saves over one {@link
 * IPClaim} per address is the number of writes: one pass's addresses in a block go in one update.
 * Named after the block ({@link BlockNames}).
 */
@AdditionalPrinterColumn(name = "CIDR", jsonPath = ".spec.cidr")
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@Group("ipam.ipamoperators.org")
@Version("v1alpha1")
@Kind("IPBlock")
@Plural("ipblocks")
@ShortNames("ipb")
public class IPBlock extends CustomResource<IPBlockSpec, Void> {
  private static final long serialVersionUID = 1L;

  /** A block object carrying these entries (address in canonical form to entry). */
  public static IPBlock of(String name, String cidr, Map<String, IPBlockEntry> entries) {
    IPBlock b = new IPBlock();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    b.setMetadata(meta);
    b.setSpec(new IPBlockSpec(cidr, new TreeMap<>(entries)));
    return b;
  }

  /** The entries, never null (an empty map for a block without spec or entries). */
  public Map<String, IPBlockEntry> entries() {
    return getSpec() == null || getSpec().entries() == null ? Map.of() : getSpec().entries();
  }
}
