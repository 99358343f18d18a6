package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.ipamoperators.controller.common.kube.MergePatch;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.cloud.NodeNetworks;
import org.ipamoperators.egressip.network.NetworkDetector;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.ipamoperators.egressip.plan.EgressWrites;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An EgressIPAM's deletion: what it published taken off, each claim released once nothing shows it. */
final class EgressCleanup {
  private static final Logger LOG = LoggerFactory.getLogger(EgressCleanup.class);

  private final KubernetesClient client;
  private final NetworkDetector detector;
  private final Platform.Known platforms;
  private final NodeNetworks networks;
  private final ClusterLedger ledger;
  private final BlockLedger blockLedger;
  private final EventRecorder events;
  private final EgressViews views;
  private final EgressPublisher publisher;
  private final EgressNetwork egressNetwork;
  private final RetryBackoff backoff;
  private final Consumer<String> forget;

  /** @param forget told the name of an IPAM whose deletion completed, to drop what is kept in memory for it */
  EgressCleanup(KubernetesClient client, NetworkDetector detector, Platform.Known platforms, NodeNetworks networks, ClusterLedger ledger,
      BlockLedger blockLedger, EventRecorder events, EgressViews views, EgressPublisher publisher,
      EgressNetwork egressNetwork, RetryBackoff backoff, Consumer<String> forget) {
    this.client = client;
    this.detector = detector;
    this.platforms = platforms;
    this.networks = networks;
    this.ledger = ledger;
    this.blockLedger = blockLedger;
    this.events = events;
    this.views = views;
    this.publisher = publisher;
    this.egressNetwork = egressNetwork;
    this.backoff = backoff;
    this.forget = forget;
  }

  /** The old operator's finalizer, which nothing removes any more: dropped once, so the IPAM stays deletable. */
  void dropLegacyFinalizer(EgressIPAM ipam) {
    if (ipam.getMetadata().getFinalizers() != null
        && ipam.getMetadata().getFinalizers().contains(EgressAnnotations.LEGACY_FINALIZER)) {
      client.resources(EgressIPAM.class).withName(ipam.getMetadata().getName()).edit(x -> {
        x.getMetadata().getFinalizers().remove(EgressAnnotations.LEGACY_FINALIZER);
        return x;
      });
    }
  }

  /**
   * IPAM deletion: clear what this IPAM wrote (namespace annotations it allocated, the network's
   * entries in its CIDRs, the cloud's attachments) and release each claim once nothing shows its
   * address any more; the finalizer stays until every claim is released, so a refused write is retried
   * (with back-off) rather than leaving an address shown that the ledger calls free. Works from the
   * claims, so an invalid spec never blocks it; manual addresses stay in their namespaces'
   * annotations (the user's own). A claim whose address does not parse is reported and left alone: it
   * cannot block the deletion. An API error reading the platform propagates (retried): cleanup never
   * runs as bare metal on a cloud, which would release claims of addresses still attached.
   */
  DeleteControl cleanup(EgressIPAM ipam) {
    String name = ipam.getMetadata().getName();
    NetworkType network = detector.detect();
    Platform platform = platforms.current();
    NodeNetwork nodeNetwork = networks.select(platform).network();
    Map<Ip, HeldAddress> held = heldForCleanup(ipam);
    List<String> failures = new ArrayList<>();
    Set<String> cleared = new HashSet<>();
    Map<String, Set<Ip>> unpublish = new HashMap<>(); // a user's own (manual) annotation stays
    List<IpRange> ranges = new ArrayList<>(EgressPolicy.parsableCidrs(ipam.getSpec())); // an invalid CIDR's addresses come from the claims
    for (var e : held.entrySet()) {
      Ip ip = e.getKey();
      if (ranges.stream().noneMatch(r -> r.contains(ip))) {
        ranges.add(IpRange.single(ip));
      }
      String ns = e.getValue().namespace();
      if (views.namespace(ns) != null) {
        cleared.add(ns);
        if (!e.getValue().manual()) {
          unpublish.computeIfAbsent(ns, k -> new HashSet<>()).add(ip);
        }
      }
    }
    unpublish.forEach((ns, ours) -> {
      String refused = publisher.removeAnnotation(ns, ours);
      if (refused != null) {
        failures.add("Namespace " + ns + ": " + refused);
      }
    });
    NetworkWrite write = new NetworkWrite(name, ranges, Map.of(), cleared, Map.of(), Map.of(), Set.of());
    List<Node> allNodes = views.nodes();
    failures.addAll(egressNetwork.write(network, write,
        network == NetworkType.OPENSHIFT_SDN ? views.hostSubnetView() : List.of(), allNodes));
    CloudCleanup cloud = EgressNetwork.cloudAttachment(platform, nodeNetwork.capabilities(), network, allNodes).byThisController()
        ? detachAll(name, nodeNetwork, allNodes, held.keySet()) : CloudCleanup.NOTHING;
    failures.addAll(cloud.failures());
    ShownAfterWrites shown = new ShownAfterWrites(views, name, network, held, true, cloud.interfaces());
    EgressWrites.Release released = EgressWrites.release(held.keySet(), shown::find);
    publisher.release(name, released.now().stream().map(held::get).toList())
        .forEach((ip, why) -> failures.add("release of " + ip + " in the ledger: " + why));
    if (!failures.isEmpty() || !released.kept().isEmpty()) {
      List<String> all = new ArrayList<>(failures);
      if (!released.kept().isEmpty()) {
        all.add(released.describeKept());
      }
      events.warning(ipam, "CleanupIncomplete", String.join("; ", all));
      reportIncomplete(ipam, String.join("; ", all));
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(backoff.next(name));
    }
    backoff.reset(name);
    forget.accept(name);
    return DeleteControl.defaultDelete();
  }

  /**
   * The deletion waits: Ready=False (reason CleanupIncomplete) says on what, beside the Event. A merge patch of
   * the conditions; a status that cannot be written is logged (the Event and the finalizer still tell).
   */
  private void reportIncomplete(EgressIPAM ipam, String message) {
    var old = ipam.getStatus() == null ? null : ipam.getStatus().conditions();
    var conditions = Conditions.set(old, "Ready", false, "CleanupIncomplete",
        "deletion waits until nothing shows this EgressIPAM's addresses: " + message,
        ipam.getMetadata().getGeneration());
    try {
      MergePatch.applyStatus(client, EgressIPAM.class, null, ipam.getMetadata().getName(),
          Serialization.asJson(Map.of("status", Map.of("conditions", conditions))));
    } catch (KubernetesClientException e) {
      LOG.info("EgressIPAM {}: status not written while its deletion waits: {}", ipam.getMetadata().getName(),
          e.getMessage());
    }
  }

  /** What a deletion's cloud step found and did: addresses on interfaces, detaches answered, failures. */
  private record CloudCleanup(ShownAfterWrites.Interfaces interfaces, List<String> failures) {
    static final CloudCleanup NOTHING = new CloudCleanup(ShownAfterWrites.Interfaces.NONE, List.of());
  }

  /** Every claim of this IPAM (IPClaims of older versions and block entries); unparsable claims reported. */
  private Map<Ip, HeldAddress> heldForCleanup(EgressIPAM ipam) {
    String name = ipam.getMetadata().getName();
    Map<Ip, HeldAddress> held = new LinkedHashMap<>();
    List<String> unparsable = new ArrayList<>();
    for (IPClaim c : ledger.claimsOfPool(EgressPublisher.pool(name))) {
      try {
        Ip ip = Ip.parse(c.getSpec().address());
        held.put(ip, new HeldAddress(ip, c.getSpec().owner().name(),
            c.getMetadata().getLabels() != null && "manual".equals(c.getMetadata().getLabels().get(EgressIPAMReconciler.LABEL_ORIGIN)), c));
      } catch (RuntimeException e) {
        unparsable.add(c.getMetadata().getName() + " ('" + (c.getSpec() == null ? null : c.getSpec().address()) + "')");
      }
    }
    blockLedger.entriesOfPool(EgressPublisher.pool(name)).forEach((ip, e) -> held.put(ip,
        new HeldAddress(ip, e.owner().name(), "manual".equals(e.origin()), null)));
    if (!unparsable.isEmpty()) {
      events.warning(ipam, "UnparsableClaim", "IPClaim(s) " + String.join(", ", unparsable) + " carry this IPAM's pool"
          + " but no address; left in place, they do not hold up the deletion");
    }
    return held;
  }

  /**
   * A deletion's cloud step: every held address still on a node's interface is detached. A node whose interface
   * cannot be read for a reason that may pass (throttled, 5xx) leaves every claim in place until it can.
   */
  private CloudCleanup detachAll(String ipam, NodeNetwork nodeNetwork, List<Node> allNodes, Set<Ip> held) {
    List<AddressChange> detach = new ArrayList<>();
    Set<Ip> attached = new HashSet<>();
    List<String> failures = new ArrayList<>();
    boolean undescribed = false;
    for (Node n : allNodes) {
      String providerId = EgressFacts.providerId(n);
      if (providerId == null) {
        continue;
      }
      try {
        NodeAttachment a = nodeNetwork.describe(new NodeRef(n.getMetadata().getName(), providerId,
            EgressFacts.labels(n), new ArrayList<>(EgressFacts.ownAddresses(n, null))));
        a.secondaryAddresses().stream().filter(held::contains).forEach(ip -> {
          attached.add(ip);
          detach.add(AddressChange.detach(ip, n.getMetadata().getName()));
        });
      } catch (NodeNetworkException e) {
        if (e.retryable()) {
          undescribed = true; // its interface may still hold our addresses
          failures.add(e.getMessage());
        } else {
          // gone with its instance, or not ours to look at: nothing of ours can be taken off it
          LOG.debug("IPAM {} cleanup: {}", ipam, e.getMessage());
        }
      }
    }
    EgressNetwork.CloudOutcome outcome = EgressNetwork.applyCloud(nodeNetwork, detach);
    failures.addAll(outcome.failures());
    return new CloudCleanup(new ShownAfterWrites.Interfaces(attached, undescribed, outcome.detached()), failures);
  }
}
