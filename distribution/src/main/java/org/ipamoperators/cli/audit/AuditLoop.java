package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.AuditReport;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.FindingKind;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.core.audit.Publication;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit as a repair loop inside the operator, as Kubernetes repairs its Service IP allocator:
 * every interval, on the leader only, it reads both sides, exports the findings as
 * {@code ipam_audit_findings{kind}}, records a Warning Event on each object at fault, and carries out
 * the provably safe releases (each logged and counted).
 */
public final class AuditLoop implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AuditLoop.class);
  private final KubernetesClient client;
  private final Duration interval;
  private final Duration leakGrace;
  private final BooleanSupplier active;
  private final Clock clock;
  private final EventRecorder events;
  private final Map<FindingKind, AtomicInteger> findings = new EnumMap<>(FindingKind.class);
  private final Counter runs;
  private final Counter failures;
  private final Counter repairs;
  private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "ipam-audit");
    t.setDaemon(true);
    return t;
  });

  private final java.util.Set<String> controllers;
  private final org.ipamoperators.egressip.cloud.CloudSettings cloud;
  private final String platform;
  private volatile org.ipamoperators.eip.EipSettings eip;
  private volatile boolean vipUnclassed = org.ipamoperators.vip.VipSettings.handleUnclassed(
      System.getenv(org.ipamoperators.vip.VipSettings.HANDLE_UNCLASSED));

  /**
   * With egressip among the controllers, the cloud's interfaces are read too, configured as the egress
   * controller is by default (its environment variables); on a platform without a cloud API that read is nothing.
   */
  public AuditLoop(KubernetesClient client, MeterRegistry registry, java.util.Set<String> controllers,
      Duration interval, Duration leakGrace, BooleanSupplier active, Clock clock) {
    this(client, registry, controllers, interval, leakGrace, active, clock, controllers.contains("egressip")
        ? org.ipamoperators.egressip.cloud.CloudSettings.fromEnvironment() : null, CloudFacts.platformOverride());
  }

  /** With egressip among the controllers, the cloud's interfaces are read too, as the egress controller reads them. */
  public AuditLoop(KubernetesClient client, MeterRegistry registry, java.util.Set<String> controllers,
      Duration interval, Duration leakGrace, BooleanSupplier active, Clock clock,
      org.ipamoperators.egressip.EgressSettings egress) {
    this(client, registry, controllers, interval, leakGrace, active, clock,
        controllers.contains("egressip") ? egress.cloud() : null, egress.platform());
  }

  /**
   * With the cloud settings to read the interfaces with (null for none) and the platform type to use when
   * there is no Infrastructure (null to read it).
   */
  public AuditLoop(KubernetesClient client, MeterRegistry registry, java.util.Set<String> controllers,
      Duration interval, Duration leakGrace, BooleanSupplier active, Clock clock,
      org.ipamoperators.egressip.cloud.CloudSettings cloud, String platform) {
    this.cloud = cloud;
    this.platform = platform;
    this.client = client;
    this.controllers = java.util.Set.copyOf(controllers);
    this.interval = interval;
    this.leakGrace = leakGrace;
    this.active = active;
    this.clock = clock;
    this.events = new EventRecorder(client, "ipam-audit");
    for (FindingKind k : FindingKind.values()) {
      AtomicInteger n = new AtomicInteger();
      findings.put(k, n);
      Gauge.builder("ipam_audit_findings", n, AtomicInteger::get)
          .description("Problems found by the last audit of ledgers against publications")
          .tag("kind", k.name().toLowerCase(java.util.Locale.ROOT)).register(registry);
    }
    runs = Counter.builder("ipam_audit_runs").description("Audits run").register(registry);
    failures = Counter.builder("ipam_audit_failures").description("Audits that could not read the cluster").register(registry);
    repairs = Counter.builder("ipam_audit_repairs").description("Claims released by the audit as provably safe").register(registry);
  }

  /**
   * Also compares the Eips' status with EC2's Elastic IPs of the eip controller's cluster (when eip is audited),
   * read with the eip controller's settings and its IAM (DescribeAddresses).
   *
   * @param settings the eip controller's settings, or null for none
   * @return this loop
   */
  public AuditLoop elasticIps(org.ipamoperators.eip.EipSettings settings) {
    this.eip = settings;
    return this;
  }

  /**
   * Whether the vip controller serves LoadBalancer Services without a class, as its settings say: their
   * addresses are audited only then.
   *
   * @return this loop
   */
  public AuditLoop vip(org.ipamoperators.vip.VipSettings settings) {
    this.vipUnclassed = settings.handleUnclassed();
    return this;
  }

  public void start() {
    executor.scheduleWithFixedDelay(this::runSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void runSafely() {
    if (!active.getAsBoolean()) {
      return; // a standby replica: the leader audits
    }
    try {
      runOnce();
    } catch (RuntimeException e) {
      failures.increment();
      LOG.warn("audit failed, next in {}: {}", interval, e.toString());
    }
  }

  /** One audit: metrics, Events, safe repairs. Returns the report for tests. */
  public AuditReport runOnce() {
    ClusterFacts facts = ClusterFacts.read(client, controllers, AuditProgress.NONE, vipUnclassed);
    CloudFacts cloudFacts = CloudFacts.NONE;
    if (cloud != null) {
      try {
        cloudFacts = CloudFacts.read(client, cloud, platform);
      } catch (CloudFacts.CloudUnreadable e) {
        failures.increment(); // the cluster is still audited; the cloud's side waits for the next run
        LOG.warn("audit: the cloud's interfaces could not be read: {}", e.getMessage());
      }
    }
    org.ipamoperators.eip.EipSettings e = eip;
    EipFacts eipFacts = EipFacts.NONE;
    if (e != null && controllers.contains("eip")) {
      try {
        eipFacts = EipFacts.read(facts.eips(), e.clusterName(), e.namespace(), e.aws());
      } catch (CloudFacts.CloudUnreadable x) {
        failures.increment();
        LOG.warn("audit: the Elastic IPs could not be read: {}", x.getMessage());
      }
    }
    AuditReport report = LedgerAudit.audit(facts.entries(), facts.publications(), cloudFacts.view(),
        eipFacts.findings(), new AuditOptions(clock.instant(), leakGrace));
    report.counts().forEach((k, n) -> findings.get(k).set(n));
    runs.increment();
    for (Finding f : report.findings()) {
      java.util.Set<HasMetadata> at = new java.util.LinkedHashSet<>(objectsAtFault(facts, f));
      at.addAll(cloudFacts.objectsAtFault(f));
      at.addAll(eipFacts.objectsAtFault(f));
      for (HasMetadata on : at) {
        events.warning(on, reason(f.kind()), f.message());
      }
    }
    List<String> done = new Repairs(client).apply(facts, report.repairs());
    done.forEach(d -> LOG.info("audit repair: {}", d));
    repairs.increment(done.stream().filter(d -> d.contains(" released: ")).count());
    if (!report.clean()) {
      LOG.warn("audit: {} finding(s) {}", report.findings().size(), report.counts());
    }
    return report;
  }

  private static List<HasMetadata> objectsAtFault(ClusterFacts facts, Finding f) {
    if (f.kind() == FindingKind.UNKNOWN) {
      return List.of();
    }
    if (f.kind() == FindingKind.LEAK || f.kind() == FindingKind.DOUBLE_CLAIM) {
      return facts.entries().stream().filter(e -> e.resource().equals(f.resource()))
          .map(facts::claimObject).filter(java.util.Objects::nonNull).toList();
    }
    return facts.publications().stream().filter(p -> p.resource().equals(f.resource()))
        .filter(p -> f.kind() != FindingKind.DRIFT || !holdsClaim(facts, p))
        .map(facts::publisher).filter(java.util.Objects::nonNull).distinct().toList();
  }

  private static boolean holdsClaim(ClusterFacts facts, Publication p) {
    return facts.entries().stream().anyMatch(e -> e.resource().equals(p.resource()) && e.owner().equals(p.holder()));
  }

  static String reason(FindingKind k) {
    return switch (k) {
      case DUPLICATE -> "AddressPublishedTwice";
      case DOUBLE_CLAIM -> "ClaimedTwice";
      case LEAK -> "ClaimNotPublished";
      case ORPHAN -> "PublishedWithoutClaim";
      case DRIFT -> "ClaimedByAnother";
      case UNKNOWN -> "CloudInterfaceUnreadable";
    };
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
