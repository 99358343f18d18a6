package org.ipamoperators.eip;

import static org.ipamoperators.eip.EipReads.nodeSelector;
import static org.ipamoperators.eip.EipReads.podName;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIpException;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.eip.plan.ResyncSchedule;
import org.ipamoperators.eip.plan.SpecCheck;

/**
 * Reconciles an Eip: finds its address by the UID tag (so a restart between AllocateAddress and the status write
 * never allocates twice), repairs duplicates, allocates (or adopts) one when there is none ({@link AddressStep}),
 * then associates it with its pod's IP ({@link PodMode}) or with the node the node-mode assignment gives it
 * ({@link NodeMode}), and records all of it in the status, the pod's annotations and the nodes' ready-status labels
 * ({@link EipReport}). Decisions are pure ({@code plan}); EC2 and Kubernetes writes are {@link Ec2Apply} and
 * {@link KubeApply}. Every AWS failure is a condition and an Event on this Eip only. Every Eip is checked against
 * AWS at least every resync interval, which repairs changes made outside (a disassociation in the console); the Eips
 * are checked together, on the interval's grid ({@link ResyncSchedule}), so that one snapshot serves them all.
 */
@ControllerConfiguration(name = "eips", finalizerName = EipNames.EIP_FINALIZER)
public class EipReconciler implements Reconciler<Eip>, Cleaner<Eip> {
  private static final Duration RETRY_AWS = Duration.ofSeconds(30);
  private static final Duration RETRY_QUOTA = Duration.ofMinutes(2);

  private final EipSettings settings;
  private final EipMetrics metrics;
  /** AWS changes to one address are serialised; different addresses proceed at once. */
  private final KeyedLocks addressLocks = new KeyedLocks(64);
  private final AddressSnapshot addresses;
  private final Ec2Apply apply;
  private final KubeApply kube;
  private final EipReport report;
  private final AddressStep address;
  private final PodMode podMode;
  private final NodeMode nodeMode;
  private final Clock clock;

  public EipReconciler(KubernetesClient client, EipSettings settings, ElasticIps ec2,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this(client, settings, ec2, new EipMetrics(registry), Clock.systemUTC());
  }

  EipReconciler(KubernetesClient client, EipSettings settings, ElasticIps ec2, EipMetrics metrics, Clock clock) {
    this.settings = settings;
    this.metrics = metrics;
    this.clock = clock;
    EventRecorder events = new EventRecorder(client, "eip-controller");
    this.addresses = new AddressSnapshot(ec2, snapshotScope(settings), snapshotAge(settings.resyncInterval()), clock);
    this.apply = new Ec2Apply(ec2);
    this.kube = new KubeApply(client);
    this.report = new EipReport(events, metrics, kube);
    this.address = new AddressStep(client, settings, ec2, addresses, apply, report, metrics, clock);
    this.podMode = new PodMode(client, ec2, apply, kube, report, this::detach);
    this.nodeMode = new NodeMode(client, settings, ec2, apply, kube, events, clock, addressLocks, this::detach);
  }

  /** Our cluster's addresses, of the namespace served when scoped. */
  private static Map<String, String> snapshotScope(EipSettings settings) {
    return settings.namespace() == null ? Map.of(EipNames.TAG_CLUSTER, settings.clusterName())
        : Map.of(EipNames.TAG_CLUSTER, settings.clusterName(), EipNames.TAG_NAMESPACE, settings.namespace());
  }

  /** A quarter of the resync interval, at most 30 s: the most a shared snapshot delays seeing a change made outside. */
  static Duration snapshotAge(Duration resync) {
    Duration quarter = resync.dividedBy(4);
    return quarter.compareTo(Duration.ofSeconds(30)) < 0 ? quarter : Duration.ofSeconds(30);
  }

  EipMetrics metrics() {
    return metrics;
  }

  @Override
  public List<EventSource<?, Eip>> prepareEventSources(EventSourceContext<Eip> context) {
    var podConfig = InformerEventSourceConfiguration.from(Pod.class, Eip.class)
        .withLabelSelector(EipNames.MANAGE_LABEL)
        .withOnUpdateFilter(EipReads::podChanged)
        .withSecondaryToPrimaryMapper(p -> eipsOfPod(context, p));
    if (settings.namespace() != null) {
      podConfig.withNamespaces(Set.of(settings.namespace()));
    }
    InformerEventSource<Pod, Eip> pods = new InformerEventSource<>(podConfig.build(), context);
    InformerEventSource<Node, Eip> nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, Eip.class)
        .withLabelSelector(EipNames.MANAGE_LABEL)
        .withOnUpdateFilter(EipReads::nodeChanged)
        .withSecondaryToPrimaryMapper(n -> context.getPrimaryCache().list(e -> nodeSelector(e) != null)
            .map(ResourceID::fromResource).collect(Collectors.toSet())).build(), context);
    podMode.pods(pods);
    nodeMode.nodes(nodes);
    return List.of(pods, nodes);
  }

  private static Set<ResourceID> eipsOfPod(EventSourceContext<Eip> context, Pod p) {
    String ns = p.getMetadata().getNamespace();
    String name = p.getMetadata().getName();
    return context.getPrimaryCache().list(ns, e -> name.equals(podName(e))
        || (e.getStatus() != null && name.equals(e.getStatus().resourceId()) && podName(e) != null))
        .map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  // --- reconcile ---------------------------------------------------------------------------------

  @Override
  public UpdateControl<Eip> reconcile(Eip eip, Context<Eip> context) {
    EipSpec spec = eip.getSpec();
    Optional<String> invalid = SpecCheck.problem(spec);
    if (invalid.isPresent()) {
      // Before the v1 upgrade: an empty v1 podName moved into the selector would be refused on every pass.
      StatusDraft status = new StatusDraft(eip);
      report.invalidSpec(eip, status, invalid.get());
      return report.finish(eip, status, null);
    }
    if (spec.selector() == null && spec.podName() != null) {
      kube.upgradeV1(eip);
      report.upgradedFromV1(eip);
      return UpdateControl.noUpdate();
    }
    EipSelector selector = spec.effectiveSelector();
    StatusDraft status = new StatusDraft(eip);
    try {
      if (selector.node() != null && !settings.nodeMode().allows(eip.getMetadata().getNamespace())) {
        nodeMode.refuse(eip, address.existing(eip, status).orElse(null), status);
        return report.finish(eip, status, paced(settings.resyncInterval()));
      }
      ElasticIp held = address.address(eip, selector, status);
      if (held == AddressStep.GONE) {
        return UpdateControl.noUpdate();
      }
      if (held == null) {
        return report.finish(eip, status, RETRY_QUOTA.compareTo(settings.resyncInterval()) < 0 ? RETRY_QUOTA
            : settings.resyncInterval());
      }
      Duration again = settings.resyncInterval();
      if (selector.pod() != null) {
        podMode.reconcile(eip, selector.pod().podName(), held, status, context);
      } else {
        again = nodeMode.reconcile(eip, held, status, context);
      }
      return report.finish(eip, status, paced(again));
    } catch (ElasticIpException e) {
      report.awsError(eip, status, e.getMessage());
      return report.finish(eip, status, RETRY_AWS);
    } finally {
      if (status.awsChanged) {
        addresses.changed(eip.getMetadata().getUid()); // after the change: the next snapshot shows it
      }
    }
  }

  /** The resync itself falls on the interval's grid ({@link ResyncSchedule}); an earlier review stays as it is. */
  private Duration paced(Duration again) {
    return again.equals(settings.resyncInterval()) ? ResyncSchedule.untilNext(clock.instant(), again) : again;
  }

  /** Nothing may hold the address now: disassociate it if it is, say why. */
  void detach(Eip eip, ElasticIp held, StatusDraft status, String reason, String message) {
    if (apply.disassociate(held, status)) {
      report.disassociated(eip, held, message);
    }
    if (podName(eip) != null) {
      podMode.unannotatePrevious(eip, null);
    }
    report.detached(status, reason, message);
  }

  // --- cleanup -----------------------------------------------------------------------------------

  @Override
  public DeleteControl cleanup(Eip eip, Context<Eip> context) {
    try {
      boolean retain = eip.getSpec() != null && eip.getSpec().retain();
      for (ElasticIp a : address.owned(eip)) {
        synchronized (addressLocks.of(a.allocationId())) {
          address.giveBack(eip, a, retain);
        }
      }
    } catch (ElasticIpException e) {
      report.cannotRelease(eip, e.getMessage());
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(RETRY_AWS);
    }
    String resource = eip.getStatus() == null ? null : eip.getStatus().resourceId();
    if (resource != null && podName(eip) != null) {
      podMode.unannotate(eip, resource);
    }
    nodeMode.forget(eip, nodeSelector(eip) != null ? resource : null);
    metrics.gone(eip.key());
    return DeleteControl.defaultDelete();
  }
}
