package org.ipamoperators.cloud.baremetal;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;

/**
 * {@link NodeNetwork} for platforms where the cluster network alone carries an egress or VIP address
 * (bare metal, vSphere, oVirt, "None"): no API is called, every change applies at once, and the
 * addresses in use are the nodes' own. Capacity comes from a node label or annotation read by the
 * caller (see {@link #capacityOf}); without one it is unlimited, and reported as such.
 */
public final class BareMetalNodeNetwork implements NodeNetwork {
  /** Node label with the number of extra addresses the node may hold. */
  public static final String CAPACITY_KEY = "ipam.ipamoperators.org/egress-capacity";

  private final Map<String, NodeRef> known = new ConcurrentHashMap<>();

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(true, true, false, false, false);
  }

  @Override
  public NodeAttachment describe(NodeRef node) {
    known.put(node.name(), node);
    Ip primary = node.addresses().isEmpty() ? null : node.addresses().get(0);
    return new NodeAttachment(node.name(), null, List.of(), primary, Set.of(), capacityOf(node.labels()));
  }

  /** Capacity from {@value #CAPACITY_KEY}; unlimited when absent or not a number. */
  public static int capacityOf(Map<String, String> labelsOrAnnotations) {
    String v = labelsOrAnnotations.get(CAPACITY_KEY);
    if (v == null) {
      return NodeAttachment.UNLIMITED;
    }
    try {
      return Math.max(0, Integer.parseInt(v.trim()));
    } catch (NumberFormatException e) {
      return NodeAttachment.UNLIMITED;
    }
  }

  /** The addresses of the nodes described so far that fall in the subnet. */
  @Override
  public Set<Ip> addressesInUse(IpRange subnet) {
    Set<Ip> used = new TreeSet<>();
    known.values().forEach(n -> n.addresses().stream().filter(subnet::contains).forEach(used::add));
    return used;
  }

  /** Nothing to call: the cluster network (HostSubnet, EgressIP, keepalived) does the work. */
  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    return changes.stream().map(AddressChangeResult::applied).toList();
  }
}
