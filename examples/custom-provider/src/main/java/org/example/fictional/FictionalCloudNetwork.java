package org.example.fictional;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;

/**
 * {@link NodeNetwork} on the fictional cloud. A node's {@code spec.providerID} is
 * {@code fictional://<instance id>}; the addresses this network assigns are labelled with
 * {@link #OWNER}, and only those are ever taken off or moved.
 */
public final class FictionalCloudNetwork implements NodeNetwork {
  /** The label of the addresses this network assigns. */
  public static final String OWNER = "ipam-operators";
  private final FictionalCloud cloud;
  private final Map<String, String> instanceOfNode = new ConcurrentHashMap<>();

  public FictionalCloudNetwork(FictionalCloud cloud) {
    this.cloud = cloud;
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(true, false, true, true, true);
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    String id = node.providerId() == null || !node.providerId().startsWith("fictional://") ? null
        : node.providerId().substring("fictional://".length());
    if (id == null) {
      throw new NodeNetworkException(node.name(), "InvalidProviderID", "spec.providerID '" + node.providerId()
          + "' is not fictional://<instance>", false, null);
    }
    FictionalCloud.Instance i;
    try {
      i = cloud.instance(id);
    } catch (FictionalCloud.ApiError e) {
      instanceOfNode.remove(node.name());
      throw new NodeNetworkException(node.name(), e.code, e.getMessage(), false, e);
    }
    instanceOfNode.put(node.name(), id);
    long foreign = i.secondaries().values().stream().filter(by -> !OWNER.equals(by)).count();
    return new NodeAttachment(node.name(), i.id(), List.of(cloud.subnet()), i.primary(), i.secondaries().keySet(),
        (int) (i.slots() - foreign));
  }

  @Override
  public Set<Ip> addressesInUse(IpRange subnet) {
    return cloud.inUse().stream().filter(subnet::contains).collect(Collectors.toSet());
  }

  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    List<AddressChangeResult> out = new ArrayList<>();
    for (AddressChange c : changes) {
      out.add(c.kind() == AddressChange.Kind.DETACH ? detach(c) : attach(c));
    }
    return out;
  }

  private AddressChangeResult attach(AddressChange c) {
    String target = instanceOfNode.get(c.toNode());
    if (target == null) {
      return AddressChangeResult.failed(c, "NodeNotDescribed", "node " + c.toNode() + " has no known instance", true);
    }
    FictionalCloud.Instance holder = cloud.holder(c.address());
    boolean ours = holder != null && OWNER.equals(holder.secondaries().get(c.address()));
    if (holder != null && !ours) {
      return AddressChangeResult.failed(c, "AddressInUse", c.address() + " is held by " + holder.id()
          + ", not assigned by this operator: left alone (node " + c.toNode() + ")", false);
    }
    try {
      cloud.assign(target, c.address(), OWNER, ours);
      return AddressChangeResult.applied(c);
    } catch (FictionalCloud.ApiError e) {
      return AddressChangeResult.failed(c, e.code, "on node " + c.toNode() + ": " + e.getMessage(), false);
    }
  }

  private AddressChangeResult detach(AddressChange c) {
    String source = instanceOfNode.get(c.fromNode());
    if (source == null) {
      return AddressChangeResult.failed(c, "NodeNotDescribed", "node " + c.fromNode() + " has no known instance",
          true);
    }
    FictionalCloud.Instance i = cloud.instance(source);
    String by = i.secondaries().get(c.address());
    if (by == null) {
      return AddressChangeResult.applied(c); // gone already
    }
    if (!OWNER.equals(by)) {
      return AddressChangeResult.skipped(c, c.address() + " on node " + c.fromNode() + " was assigned by " + by
          + ": left alone");
    }
    cloud.unassign(source, c.address());
    return AddressChangeResult.applied(c);
  }
}
