package org.ipamoperators.eip;

import static org.ipamoperators.eip.EipReads.internalIp;
import static org.ipamoperators.eip.EipReads.labels;
import static org.ipamoperators.eip.EipReads.nodeSelector;
import static org.ipamoperators.eip.EipReads.ready;
import static org.ipamoperators.eip.StatusDraft.COND_READY;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.core.failover.NodeCondition;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.plan.NodeAssignment;
import org.ipamoperators.eip.plan.NodeCandidate;
import org.ipamoperators.eip.plan.NodeEip;
import org.ipamoperators.eip.plan.NodeHealth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node mode of {@link EipReconciler}: all node-mode Eips are planned at once ({@link NodeAssignment}, readiness
 * from {@link NodeHealth}), then each Eip's part is carried out in AWS, in its status and in the nodes'
 * {@code ready-status} labels. Holds the memory node mode needs between passes: the holders it last chose (the
 * caches lag behind its own writes) and the nodes' readiness as it saw them.
 */
final class NodeMode {
  static final String REASON_HOLDER_NOT_READY = "HolderNotReady";
  static final String REASON_NOT_ALLOWED = "NodeModeNotAllowed";
  static final String REASON_OUTSIDE_BOUND = "NodeOutsideBound";
  private static final Logger LOG = LoggerFactory.getLogger(NodeMode.class);

  /** How the reconciler detaches an address (disassociate, Event, status). */
  interface Detach {
    void detach(Eip eip, ElasticIp address, StatusDraft status, String reason, String message);
  }

  private final KubernetesClient client;
  private final EipSettings settings;
  private final ElasticIps ec2;
  private final Ec2Apply apply;
  private final KubeApply kube;
  private final EventRecorder events;
  private final Clock clock;
  private final KeyedLocks addressLocks;
  private final Detach detacher;
  /** Plans are made one at a time, with the holders last chosen. */
  private final Object planLock = new Object();
  private final NodeHealth health;
  private final Map<String, Optional<String>> nodeHolders = new ConcurrentHashMap<>();
  private volatile InformerEventSource<Node, Eip> nodes;

  NodeMode(KubernetesClient client, EipSettings settings, ElasticIps ec2, Ec2Apply apply, KubeApply kube,
      EventRecorder events, Clock clock, KeyedLocks addressLocks, Detach detacher) {
    this.client = client;
    this.settings = settings;
    this.ec2 = ec2;
    this.apply = apply;
    this.kube = kube;
    this.events = events;
    this.clock = clock;
    this.addressLocks = addressLocks;
    this.detacher = detacher;
    this.health = new NodeHealth(settings.failoverGrace(), settings.failoverRecovery());
  }

  void nodes(InformerEventSource<Node, Eip> nodes) {
    this.nodes = nodes;
  }

  /** The Eip is gone: its holder is forgotten and that node, if any, is labelled {@code ready-status=false}. */
  void forget(Eip eip, String holder) {
    nodeHolders.remove(eip.key());
    if (holder != null) {
      kube.labelNode(holder, "false");
    }
  }

  /** One node-mode pass: the plan over all node-mode Eips, the nodes it was made from, when to look again. */
  private record NodePass(NodeAssignment plan, List<Node> nodes, Map<String, Node> byName, Duration again) {}

  /**
   * Decides under the plan lock (informer caches and memory only, no I/O) and reserves this Eip's node there, so
   * that Eips reconciled at once never pick the same node; then acts on AWS under this address's lock only.
   */
  Duration reconcile(Eip eip, ElasticIp address, StatusDraft status, Context<Eip> context) {
    NodePass pass;
    synchronized (planLock) {
      pass = planNodes(context);
      nodeHolders.put(eip.key(), pass.plan().holder(eip.key()));
    }
    try {
      synchronized (addressLocks.of(address.allocationId())) {
        actOnNode(eip, address, status, pass);
      }
    } finally {
      readyLabels(pass.plan(), pass.byName());
      // A deleted node no Eip holds any more: the old operator's finalizer would keep it forever.
      for (Node n : pass.nodes()) {
        if (n.getMetadata().getDeletionTimestamp() != null
            && !pass.plan().holders().containsValue(n.getMetadata().getName())) {
          LegacyFinalizers.removeFromNode(client, n);
        }
      }
    }
    return pass.again();
  }

  /** The assignment of every node-mode Eip from the caches and the holders last written. Caller holds planLock. */
  private NodePass planNodes(Context<Eip> context) {
    Instant now = clock.instant();
    List<Node> all = nodes.list(n -> true).toList();
    Map<String, Boolean> readiness = new HashMap<>();
    all.forEach(n -> readiness.put(n.getMetadata().getName(), ready(n)));
    Map<String, NodeVerdict> verdicts = health.evaluate(readiness, now);
    Map<String, Node> byName = new HashMap<>();
    List<NodeCandidate> candidates = new ArrayList<>();
    for (Node n : all) {
      byName.put(n.getMetadata().getName(), n);
      String manage = labels(n).get(EipNames.MANAGE_LABEL);
      if (manage == null || "false".equalsIgnoreCase(manage)) {
        continue;
      }
      NodeVerdict v = verdicts.get(n.getMetadata().getName());
      candidates.add(new NodeCandidate(n.getMetadata().getName(), labels(n),
          v == null ? NodeCondition.FAILED : v.condition(), n.getMetadata().getDeletionTimestamp() != null,
          internalIp(n) != null && ElasticIps.instanceId(n.getSpec().getProviderID()).isPresent(),
          settings.nodeMode().nodes().admits(labels(n))));
    }
    List<NodeEip> nodeEips = new ArrayList<>();
    for (Eip e : context.getPrimaryCache().list().toList()) {
      Map<String, String> selector = nodeSelector(e);
      if (selector == null || e.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      Optional<String> remembered = nodeHolders.get(e.key());
      String holder = remembered != null ? remembered.orElse(null)
          : e.getStatus() == null ? null : e.getStatus().resourceId();
      nodeEips.add(new NodeEip(e.key(), selector, holder,
          settings.nodeMode().allows(e.getMetadata().getNamespace())));
    }
    Duration again = settings.resyncInterval();
    for (NodeVerdict v : verdicts.values()) {
      if (v.reviewAt() != null && v.reviewAt().isAfter(now)) {
        Duration d = Duration.between(now, v.reviewAt()).plusMillis(200);
        again = d.compareTo(again) < 0 ? d : again;
      }
    }
    return new NodePass(NodeAssignment.plan(nodeEips, candidates,
        "--eip-node-mode-node-selector " + settings.nodeMode().nodes().text()), all, byName, again);
  }

  /** Carries out this Eip's part of the plan in AWS and in its status. */
  private void actOnNode(Eip eip, ElasticIp address, StatusDraft status, NodePass pass) {
    Optional<String> target = pass.plan().holder(eip.key());
    if (target.isEmpty()) {
      detacher.detach(eip, address, status,
          pass.plan().outsideBound().contains(eip.key()) ? REASON_OUTSIDE_BOUND : "NoEligibleNode",
          pass.plan().unassigned().getOrDefault(eip.key(), "no node may hold it"));
      return;
    }
    Node node = pass.byName().get(target.get());
    String ip = internalIp(node);
    String kept = pass.plan().kept().get(eip.key());
    if (kept != null) {
      keepOnHolder(eip, address, status, target.get(), ip, kept);
      return;
    }
    String eni = address.networkInterfaceId();
    String association = address.associationId();
    if (!address.associatedTo(null, ip)) {
      String instance = ElasticIps.instanceId(node.getSpec().getProviderID()).orElseThrow();
      Optional<String> found = ec2.interfaceHolding(instance, ip);
      if (found.isEmpty()) {
        String message = "node " + target.get() + " address " + ip + " is on no network interface of " + instance;
        events.warning(node, "EniNotFound", message);
        detacher.detach(eip, address, status, "EniNotFound", message);
        nodeHolders.put(eip.key(), Optional.empty());
        return;
      }
      eni = found.get();
      association = apply.associate(address, eni, ip, status).associationId();
      events.normal(eip, "Associated", address.publicIp() + " associated with node " + target.get() + " ("
          + ip + " on " + eni + ")" + (address.associated() ? ", moved from " + address.privateIp() : ""));
    }
    status.attached(eni, ip, target.get(), association);
    status.condition(COND_READY, true, "Associated", address.publicIp() + " is associated with node "
        + target.get());
  }

  /**
   * The holder is not Ready but no other node may take the address: it stays where it is (k8s-eip-operator kept
   * the association too), with a condition, a Warning once and a log line saying why. Never associated anew with
   * a node that is not Ready.
   */
  private void keepOnHolder(Eip eip, ElasticIp address, StatusDraft status, String holder, String ip,
      String why) {
    if (!address.associatedTo(null, ip)) {
      detacher.detach(eip, address, status, "NoEligibleNode", why);
      nodeHolders.put(eip.key(), Optional.empty());
      return;
    }
    String message = address.publicIp() + " stays associated: " + why;
    if (!REASON_HOLDER_NOT_READY.equals(readyReason(eip))) {
      LOG.warn("Eip {}: {}", eip.key(), message);
      events.warning(eip, REASON_HOLDER_NOT_READY, message);
    }
    status.attached(address.networkInterfaceId(), ip, holder, address.associationId());
    status.condition(COND_READY, false, REASON_HOLDER_NOT_READY, message);
  }

  /**
   * The Eip's namespace may not use node mode: no address is allocated or associated for it. One it already holds
   * (associated before the limit was set) is left as it is, never detached behind its back, and stays reserved to
   * its node in the plan ({@link NodeAssignment#frozen}); deleting the Eip releases it as usual.
   */
  void refuse(Eip eip, ElasticIp address, StatusDraft status) {
    String message = settings.nodeMode().refusal(eip.getMetadata().getNamespace());
    if (address == null) {
      message += "; no address is allocated";
    } else if (address.associated()) {
      String holder = eip.getStatus() == null ? null : eip.getStatus().resourceId();
      status.attached(address.networkInterfaceId(), address.privateIp(), holder, address.associationId());
      message += "; " + address.publicIp() + ", associated before, stays on " + (holder == null
          ? address.privateIp() : "node " + holder) + " and is associated with no other node until the Eip is deleted";
    } else {
      status.detached();
      message += "; " + address.publicIp() + " stays allocated, associated with nothing, until the Eip is deleted";
    }
    if (!REASON_NOT_ALLOWED.equals(readyReason(eip))) {
      LOG.warn("Eip {}: {}", eip.key(), message);
      events.warning(eip, REASON_NOT_ALLOWED, message);
    }
    status.condition(COND_READY, false, REASON_NOT_ALLOWED, message);
  }

  private static String readyReason(Eip eip) {
    if (eip.getStatus() == null || eip.getStatus().conditions() == null) {
      return null;
    }
    return eip.getStatus().conditions().stream().filter(c -> COND_READY.equals(c.getType()))
        .map(Condition::getReason).findFirst().orElse(null);
  }

  private void readyLabels(NodeAssignment plan, Map<String, Node> byName) {
    plan.readyStatus().forEach((name, ready) -> {
      Node n = byName.get(name);
      String want = ready ? "true" : "false";
      if (n == null || want.equals(labels(n).get(EipNames.READY_STATUS_LABEL))) {
        return;
      }
      kube.labelNode(name, want);
    });
  }
}
