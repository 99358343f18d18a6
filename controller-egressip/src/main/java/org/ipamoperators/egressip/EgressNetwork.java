package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.OvnWriter;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.egressip.network.SdnWriter;
import org.ipamoperators.egressip.plan.CloudAttachment;

/** The writes of a pass on the cloud's interfaces and the cluster network's objects (steps 3 and 4). */
final class EgressNetwork {
  private final KubernetesClient client;
  private final EgressViews views;
  private final Executor writers;

  EgressNetwork(KubernetesClient client, EgressViews views, Executor writers) {
    this.client = client;
    this.views = views;
    this.writers = writers;
  }

  /** What the cloud step did: its failures, whether one may pass, and the detaches it answered. */
  record CloudOutcome(List<String> failures, boolean retry, Set<Ip> detached) {}

  /** Step 3: the cloud's attaches, moves and detaches, and what it answered. */
  static CloudOutcome applyCloud(NodeNetwork nodeNetwork, List<AddressChange> changes) {
    Set<Ip> detached = new HashSet<>();
    Set<Ip> detachFailed = new HashSet<>();
    List<String> failures = new ArrayList<>();
    boolean retry = false;
    for (AddressChangeResult r : changes.isEmpty() ? List.<AddressChangeResult>of() : nodeNetwork.apply(changes)) {
      boolean detach = r.change().kind() == AddressChange.Kind.DETACH;
      if (detach) {
        detached.add(r.change().address());
      }
      if (r.outcome() == AddressChangeResult.Outcome.FAILED) {
        if (detach) {
          detachFailed.add(r.change().address());
        }
        retry |= r.retryable();
        failures.add(r.change().kind() + " " + r.change().address() + " on "
            + (r.change().toNode() != null ? r.change().toNode() : r.change().fromNode()) + ": "
            + r.message() + (r.errorCode() == null ? "" : " (" + r.errorCode() + ")"));
      }
    }
    detached.removeAll(detachFailed);
    return new CloudOutcome(failures, retry, detached);
  }

  /** Step 4: the cluster network's objects; one message per object that could not be written. */
  List<String> write(NetworkType network, NetworkWrite write, Collection<HostSubnet> subnets,
      List<Node> allNodes) {
    return switch (network) {
      case OPENSHIFT_SDN -> new SdnWriter(client, views::netNamespace, () -> subnets, views::wroteNetworkObject,
          views::hostSubnetGone, writers)
          .apply(write);
      case OVN_KUBERNETES -> new OvnWriter(client, views.egressIpView(), writers).apply(write, allNodes);
      case NONE -> List.of();
    };
  }

  /** Who attaches the addresses to the nodes' cloud interfaces (see {@link CloudAttachment}). */
  static CloudAttachment cloudAttachment(Platform platform, NetworkCapabilities caps, NetworkType network,
      List<Node> allNodes) {
    return CloudAttachment.decide(platform.needsCloudApi(), caps.requiresApiCalls(), network,
        CloudAttachment.openShiftAttaches(allNodes.stream().map(EgressFacts::annotations).toList()));
  }
}
