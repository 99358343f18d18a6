package org.ipamoperators.cli.operator;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.ipamoperators.cli.ProbeServer.Probe;
import org.ipamoperators.cli.StartFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ipam operator}'s leader election on a Lease, run by java-operator-sdk: who leads, what the controllers
 * start once this replica leads, and handing the Lease back on a clean stop. Without leader election this replica
 * leads from the start.
 */
final class LeaseElection {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseElection.class);
  static final String DEFAULT_NAMESPACE = "ipam-operators";
  private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");

  /** The Lease and its timing; {@code enabled} false runs a single replica without a Lease. */
  record Settings(boolean enabled, String name, String namespace, String identity, Duration leaseDuration,
      Duration renewDeadline, Duration retryPeriod) {}

  private final Settings settings;
  private final Runnable onLost;
  private final BooleanSupplier stopping;
  private final AtomicBoolean leading = new AtomicBoolean();
  private final AtomicBoolean everLed = new AtomicBoolean();
  private final AtomicReference<String> currentLeader = new AtomicReference<>();
  /** What the controllers run once this replica leads (at once without leader election). */
  private final List<Runnable> onLeading = new CopyOnWriteArrayList<>();

  /**
   * @param onLost called when a leader loses its Lease while not stopping: it must stop reconciling
   * @param stopping whether the operator is stopping, when losing the Lease is expected
   */
  LeaseElection(Settings settings, Runnable onLost, BooleanSupplier stopping) {
    this.settings = settings;
    this.onLost = onLost;
    this.stopping = stopping;
  }

  Settings settings() {
    return settings;
  }

  boolean isLeader() {
    return leading.get();
  }

  /** Whether this replica may do the leader's work now: it holds the Lease, or there is no election. */
  boolean leads() {
    return !settings.enabled() || leading.get();
  }

  /** Runs {@code r} once this replica leads; call before the operator starts. */
  void whenLeading(Runnable r) {
    onLeading.add(r);
  }

  /** Adds the leader-election configuration to java-operator-sdk's, when enabled. */
  void configure(ConfigurationServiceOverrider o) {
    if (!settings.enabled()) {
      return;
    }
    o.withLeaderElectionConfiguration(LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(settings.name())
        .withLeaseNamespace(settings.namespace())
        .withIdentity(settings.identity())
        .withLeaseDuration(settings.leaseDuration())
        .withRenewDeadline(settings.renewDeadline())
        .withRetryPeriod(settings.retryPeriod())
        // JOSDK would System.exit(1); this command stops cleanly and exits 1 instead.
        .withExitOnStopLeading(false)
        .withLeaderCallbacks(new LeaderCallbacks(this::onStartLeading, this::onStopLeading, this::onNewLeader))
        .build());
  }

  /** Without leader election, runs what the controllers start on leading, once the operator started. */
  void startedWithoutElection() {
    if (!settings.enabled()) {
      runOnLeading();
    }
  }

  /** The readiness of a started replica: leader, standby, or no election. */
  Probe ready() {
    if (!settings.enabled()) {
      return Probe.ok("ok");
    }
    if (leading.get()) {
      return Probe.ok("ok: leader");
    }
    String leader = currentLeader.get();
    return Probe.ok("ok: standby" + (leader == null || leader.isEmpty() ? "" : ", leader is " + leader));
  }

  private void onStartLeading() {
    everLed.set(true);
    leading.set(true);
    LOG.info("leading: Lease {}/{} held by {}; reconciling", settings.namespace(), settings.name(),
        settings.identity());
    runOnLeading();
  }

  private void runOnLeading() {
    for (Runnable r : onLeading) {
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.error("a controller's start on leading failed: {}", StartFailure.describe(e), e);
      }
    }
  }

  private void onStopLeading() {
    boolean was = leading.getAndSet(false);
    if (!stopping.getAsBoolean() && was) {
      LOG.error("lost the Lease {}/{}: stopping so that only the new leader reconciles", settings.namespace(),
          settings.name());
      onLost.run();
    }
  }

  private void onNewLeader(String leader) {
    currentLeader.set(leader);
    if (leader != null && !leader.equals(settings.identity())) {
      LOG.info("leader is {}; standing by", leader);
    }
  }

  /** After the controllers stopped: hands the Lease back if this replica ever held it. */
  void stepDown(KubernetesClient client) {
    if (settings.enabled() && everLed.get()) {
      releaseLease(client);
    }
  }

  /** This replica no longer leads, whatever the Lease says. */
  void stopped() {
    leading.set(false);
  }

  /**
   * Hands the Lease back after the controllers stopped, as client-go's ReleaseOnCancel does: a
   * standby takes over at its next retry instead of waiting for the lease to expire. Guarded by the
   * Lease's resourceVersion, so a Lease someone else holds by now is left alone.
   */
  private void releaseLease(KubernetesClient client) {
    String namespace = settings.namespace();
    String name = settings.name();
    try {
      Lease lease = client.resources(Lease.class).inNamespace(namespace).withName(name).get();
      if (lease == null || lease.getSpec() == null
          || !settings.identity().equals(lease.getSpec().getHolderIdentity())) {
        return;
      }
      String now = MICRO_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
      String patch = "{\"metadata\":{\"resourceVersion\":\"" + lease.getMetadata().getResourceVersion() + "\"},"
          + "\"spec\":{\"holderIdentity\":null,\"leaseDurationSeconds\":1,\"renewTime\":\"" + now + "\"}}";
      client.resources(Lease.class).inNamespace(namespace).withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      LOG.info("released Lease {}/{}", namespace, name);
    } catch (KubernetesClientException e) {
      LOG.warn("could not release Lease {}/{}: {}; a standby takes over when it expires", namespace, name,
          StartFailure.describe(e));
    }
  }

  /** The pod's namespace from its service account, else {@value #DEFAULT_NAMESPACE}. */
  static String defaultNamespace() {
    Path sa = Path.of(Config.KUBERNETES_NAMESPACE_PATH);
    try {
      if (Files.isReadable(sa)) {
        String ns = Files.readString(sa, StandardCharsets.UTF_8).trim();
        if (!ns.isEmpty()) {
          return ns;
        }
      }
    } catch (IOException e) {
      LOG.debug("cannot read {}", sa, e);
    }
    return DEFAULT_NAMESPACE;
  }

  /** The host name and a random suffix, so that two replicas on one host differ. */
  static String defaultIdentity() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = "ipam";
      }
    }
    return host + "_" + UUID.randomUUID().toString().substring(0, 8);
  }
}
