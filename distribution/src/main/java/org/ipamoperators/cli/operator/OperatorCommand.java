package org.ipamoperators.cli.operator;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RuntimeInfo;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.javaoperatorsdk.operator.health.EventSourceHealthIndicator;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.ipamoperators.cli.DurationConverter;
import org.ipamoperators.cli.ProbeServer.Probe;
import org.ipamoperators.cli.ProbeServer;
import org.ipamoperators.cli.StartFailure;
import org.ipamoperators.cli.operator.OperatorControllers.Controller;
import org.ipamoperators.cli.operator.OperatorControllers.RequiredCrd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ipam operator}: runs the chosen controllers against a cluster until stopped, with leader
 * election on a Lease, {@code /healthz}, {@code /readyz} and {@code /metrics} on one HTTP port.
 *
 * <p>Every replica starts its informers and fills its caches; only the holder of the Lease
 * reconciles. A replica with synced caches is ready whether it leads or not, so a standby can take
 * over within one lease duration. SIGTERM (or {@link #stop()}) stops reconciling, waits for
 * reconciles in flight, hands the Lease back so a standby takes over at once, and exits 0. A leader
 * that loses its Lease exits 1 so that it never reconciles next to the new leader.
 */
@Command(name = "operator", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Runs controllers against a Kubernetes or OpenShift cluster until stopped (SIGTERM).",
        "Connects with --kubeconfig, else $KUBECONFIG, ~/.kube/config or the pod's service account.",
        "Serves /healthz, /readyz and /metrics (Prometheus) on --http-port."},
    footer = {"", "Exit status: 0 stopped on request (SIGTERM); 1 could not start, or a fatal",
        "error (the Lease lost, an informer broken); 2 bad options or kubeconfig."})
public final class OperatorCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(OperatorCommand.class);
  static final String DEFAULT_NAMESPACE = "ipam-operators";
  public static final String DEFAULT_LEASE = "ipam-operators-leader";
  /** Start-up checks answered 429 or 5xx are tried this often (about 30 s in all) before giving up. */
  private static final int START_ATTEMPTS = 6;
  public static final String FIELD_MANAGER = "ipam-operator";
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");

  @Spec
  CommandSpec spec;

  @Option(names = "--controllers", split = ",", required = true, paramLabel = "NAME",
      completionCandidates = ControllerNames.class,
      description = "controllers to run, comma-separated: ${COMPLETION-CANDIDATES}")
  List<String> controllers;

  @Option(names = "--kubeconfig", paramLabel = "FILE",
      description = "kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, else the in-cluster service account)")
  Path kubeconfig;

  @Option(names = "--namespace", paramLabel = "NAMESPACE",
      description = "namespace of the leader-election Lease (default: the pod's namespace, else " + DEFAULT_NAMESPACE + ")")
  String namespace;

  @Option(names = "--leader-election", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "elect one leader among the replicas through a Lease (default: on; --no-leader-election for a single replica)")
  boolean leaderElection;

  @Option(names = "--lease-name", defaultValue = DEFAULT_LEASE, paramLabel = "NAME",
      description = "name of the leader-election Lease (default: ${DEFAULT-VALUE})")
  String leaseName;

  @Option(names = "--http-port", defaultValue = "8080", paramLabel = "PORT",
      description = "port for /healthz, /readyz and /metrics (default: ${DEFAULT-VALUE}; 0 picks a free port)")
  int httpPort;

  @Option(names = "--bind-address", defaultValue = "0.0.0.0", paramLabel = "ADDRESS",
      description = "address the HTTP port listens on (default: ${DEFAULT-VALUE})")
  String bindAddress;

  @Option(names = "--install-crds",
      description = "server-side apply the CRDs the controllers need before starting (needs the right to; off by default)")
  boolean installCrds;

  @Option(names = "--lease-duration", hidden = true, defaultValue = "15s", converter = DurationConverter.class)
  Duration leaseDuration;

  @Option(names = "--renew-deadline", hidden = true, defaultValue = "10s", converter = DurationConverter.class)
  Duration renewDeadline;

  @Option(names = "--retry-period", hidden = true, defaultValue = "2s", converter = DurationConverter.class)
  Duration retryPeriod;

  @Option(names = "--leader-identity", hidden = true,
      description = "identity in the Lease (default: host name and a random suffix)")
  String leaderIdentity;

  @Option(names = "--cache-sync-timeout", hidden = true, defaultValue = "2m", converter = DurationConverter.class)
  Duration cacheSyncTimeout;

  @Option(names = "--termination-timeout", hidden = true, defaultValue = "10s", converter = DurationConverter.class,
      description = "how long reconciles in flight may finish when stopping")
  Duration terminationTimeout;

  @Option(names = "--audit", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "audit the ledgers against what the cluster shows, on the leader, and release claims of owners that are gone (default: on)")
  boolean audit;

  @Option(names = "--audit-interval", defaultValue = "10m", converter = DurationConverter.class, paramLabel = "DURATION",
      description = "time between two audits (default: ${DEFAULT-VALUE})")
  Duration auditInterval;

  @Mixin
  KeepalivedOptions keepalivedOptions = new KeepalivedOptions();

  @Mixin
  EipOptions eipOptions = new EipOptions();

  @Mixin
  ControllerEnvironmentOptions environmentOptions = new ControllerEnvironmentOptions();

  /** Candidates for --controllers in the help. */
  static final class ControllerNames implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return OperatorControllers.names().iterator();
    }
  }

  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicReference<Integer> exitCode = new AtomicReference<>();
  private final AtomicBoolean leading = new AtomicBoolean();
  private final AtomicBoolean everLed = new AtomicBoolean();
  /** What the controllers run once this replica leads (at once without leader election). */
  private final List<Runnable> onLeading = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final AtomicReference<String> currentLeader = new AtomicReference<>();
  private volatile boolean stopping;
  private volatile boolean operatorStarted;
  private volatile String identity;
  private volatile String leaseNamespace;
  private volatile KubernetesClient client;
  private volatile Operator operator;
  private volatile ProbeServer http;
  private volatile PrometheusMeterRegistry registry;
  private volatile org.ipamoperators.cli.audit.AuditLoop auditLoop;
  private volatile JvmGcMetrics gcMetrics;
  private OperatorControllers.Settings settings;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    List<Controller> selected;
    try {
      selected = selectControllers();
      boolean eip = selected.stream().anyMatch(c -> c.name().equals("eip"));
      settings = new OperatorControllers.Settings(keepalivedOptions.settings(), eip ? eipOptions.settings() : null,
          ProviderJars.loader(environmentOptions.providerDir(), System.getenv(ProviderJars.ENV)));
    } catch (StartFailure e) {
      err.println("ipam operator: " + e.getMessage());
      err.flush();
      return e.exitCode();
    } catch (IllegalArgumentException | picocli.CommandLine.TypeConversionException e) {
      err.println("ipam operator: " + e.getMessage());
      err.flush();
      return 2;
    }
    Thread hook = new Thread(this::onShutdownSignal, "ipam-operator-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      start(selected);
      started.countDown();
      awaitStopRequest();
    } catch (StartFailure e) {
      err.println("ipam operator: " + e.getMessage());
      err.flush();
      requestStop(e.exitCode());
    } catch (RuntimeException e) {
      err.println("ipam operator: " + StartFailure.describe(e));
      err.flush();
      LOG.debug("start failed", e);
      requestStop(1);
    } finally {
      teardown();
      finished.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running or has run: nothing to remove
      }
    }
    Integer code = exitCode.get();
    return code == null ? 0 : code;
  }

  /** Asks a running {@code ipam operator} to stop as on SIGTERM; returns at once. */
  public void stop() {
    requestStop(0);
  }

  /** Waits until the operator has started (true) or given up starting or stopped (false). */
  public boolean awaitStarted(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (started.await(50, TimeUnit.MILLISECONDS)) {
        return true;
      }
      if (finished.getCount() == 0) {
        return false;
      }
    }
    return false;
  }

  /** The port /healthz, /readyz and /metrics are served on, once started. */
  public int boundHttpPort() {
    return http == null ? -1 : http.address().getPort();
  }

  /** The identity this replica writes into the Lease. */
  public String identity() {
    return identity;
  }

  public boolean isLeader() {
    return leading.get();
  }

  /** keepalived's settings as the options give them. */
  public org.ipamoperators.keepalived.KeepalivedSettings keepalivedSettings() {
    return keepalivedOptions.settings();
  }

  /** eip's settings as the options give them. */
  public org.ipamoperators.eip.EipSettings eipSettings() {
    return eipOptions.settings();
  }

  private void requestStop(int code) {
    if (exitCode.compareAndSet(null, code)) {
      stopping = true;
      stopRequested.countDown();
    }
  }

  private void awaitStopRequest() {
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      LOG.info("interrupted: stopping");
      requestStop(0);
      Thread.currentThread().interrupt();
    }
  }

  private void onShutdownSignal() {
    if (exitCode.get() == null) {
      LOG.info("stop signal received: stopping");
    }
    requestStop(0);
    boolean done = false;
    try {
      // The JVM halts when this hook returns: let the command finish its teardown first.
      done = finished.await(terminationTimeout.toMillis() + 15_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // A JVM ended by a signal exits 128 + the signal (143 for SIGTERM) even after a clean stop; the help
    // promises 0 for a stop on request, so the exit status is set here, as the command would have.
    Integer code = exitCode.get();
    System.err.flush();
    Runtime.getRuntime().halt(!done ? 1 : code == null ? 0 : code);
  }

  private List<Controller> selectControllers() throws StartFailure {
    Set<String> names = new LinkedHashSet<>();
    for (String c : controllers) {
      String n = c.trim().toLowerCase(Locale.ROOT);
      if (!n.isEmpty()) {
        names.add(n);
      }
    }
    if (names.isEmpty()) {
      throw new StartFailure(2, "--controllers names no controller; known: " + String.join(", ", OperatorControllers.names()));
    }
    List<Controller> out = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String n : names) {
      OperatorControllers.byName(n).ifPresentOrElse(out::add, () -> unknown.add(n));
    }
    if (!unknown.isEmpty()) {
      throw new StartFailure(2, (unknown.size() == 1 ? "unknown controller '" : "unknown controllers '")
          + String.join("', '", unknown) + "'; known: " + String.join(", ", OperatorControllers.names()));
    }
    if (namespace != null && !DNS_LABEL.matcher(namespace).matches()) {
      throw new StartFailure(2, "--namespace '" + namespace + "' is not a valid namespace name");
    }
    if (!DNS_SUBDOMAIN.matcher(leaseName).matches()) {
      throw new StartFailure(2, "--lease-name '" + leaseName + "' is not a valid object name");
    }
    if (httpPort < 0 || httpPort > 65535) {
      throw new StartFailure(2, "--http-port " + httpPort + " is not a port number");
    }
    if (leaderElection && renewDeadline.compareTo(leaseDuration) >= 0) {
      throw new StartFailure(2, "--renew-deadline must be shorter than --lease-duration");
    }
    return out;
  }

  /** Settings, metrics and HTTP, start-up checks on the cluster, then the controllers and the audit. */
  private void start(List<Controller> selected) throws StartFailure {
    Config config = clientConfig();
    leaseNamespace = namespace != null ? namespace : defaultNamespace();
    identity = leaderIdentity != null ? leaderIdentity : defaultIdentity();
    startMetricsAndHttp();
    List<String> names = selected.stream().map(Controller::name).toList();
    LOG.info("ipam operator: controllers {}, cluster {}, {}, /healthz /readyz /metrics on {}:{}", names,
        config.getMasterUrl(), leaderElection ? "leader election on Lease " + leaseNamespace + "/" + leaseName
            + " as " + identity : "no leader election", bindAddress, boundHttpPort());
    checkCluster(config, OperatorControllers.crds(selected));
    if (stopping) {
      return;
    }
    startControllers(config, selected);
    if (audit) {
      startAudit(names);
    }
    LOG.info("ipam operator started: caches synced{}", leaderElection
        ? "; electing a leader on Lease " + leaseNamespace + "/" + leaseName : "; reconciling");
  }

  private void startMetricsAndHttp() throws StartFailure {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    io.micrometer.core.instrument.Metrics.globalRegistry.add(registry); // providers found by ServiceLoader record here
    bindJvmMetrics();
    startHttp();
  }

  /**
   * The start-up checks, with a client that fails fast. A busy apiserver answers 429 or 5xx for a moment: that is
   * no reason to crash-loop. Wrong input (unreachable URL, missing CRD, RBAC) still fails at once with its one line.
   */
  private void checkCluster(Config config, List<RequiredCrd> crds) throws StartFailure {
    try (KubernetesClient probe = new KubernetesClientBuilder().withConfig(probeConfig(config)).build()) {
      for (int attempt = 1; ; attempt++) {
        try {
          checkClusterOnce(probe, config.getMasterUrl(), crds);
          return;
        } catch (StartFailure e) {
          if (attempt >= START_ATTEMPTS || !StartFailure.isTransient(e) || stopping) {
            throw e;
          }
          LOG.warn("start-up check failed ({}), attempt {} of {}; retrying", e.getMessage(), attempt, START_ATTEMPTS);
          try {
            Thread.sleep(startRetryDelayMillis(attempt));
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw e;
          }
        }
      }
    }
  }

  /** The wait after the given failed attempt: doubling from 1 s, at most 8 s. */
  static long startRetryDelayMillis(int attempt) {
    return Math.min(8_000L, 500L << attempt);
  }

  private void checkClusterOnce(KubernetesClient probe, String url, List<RequiredCrd> crds) throws StartFailure {
    checkReachable(probe, url);
    if (installCrds) {
      installCrds(probe, crds);
    }
    checkCrds(probe, crds);
    if (leaderElection) {
      checkLeaseNamespace(probe);
    }
  }

  /** Registers the controllers and starts their informers; without leader election they run at once. */
  private void startControllers(Config config, List<Controller> selected) throws StartFailure {
    client = new KubernetesClientBuilder().withConfig(config).build();
    Operator op = new Operator(this::configure);
    environmentOptions.apply();
    for (Controller c : selected) {
      onLeading.add(c.registrar().register(op, client, registry, settings));
    }
    operator = op;
    try {
      op.start();
    } catch (RuntimeException e) {
      LOG.debug("operator start failed", e);
      throw new StartFailure(1, "could not start the controllers: " + StartFailure.describe(e), e);
    }
    operatorStarted = true;
    if (!leaderElection) {
      runOnLeading();
    }
  }

  /** Audits the ledgers of the controllers that have one, on the leader only. */
  private void startAudit(List<String> controllerNames) {
    Set<String> audited = new java.util.HashSet<>(controllerNames);
    audited.retainAll(org.ipamoperators.cli.audit.ClusterFacts.ALL);
    auditLoop = new org.ipamoperators.cli.audit.AuditLoop(client, registry, audited, auditInterval,
        org.ipamoperators.core.audit.AuditOptions.DEFAULT_LEAK_GRACE, () -> !leaderElection || leading.get(),
        java.time.Clock.systemUTC()).elasticIps(settings == null ? null : settings.eip());
    auditLoop.start();
  }

  private void configure(ConfigurationServiceOverrider o) {
    o.withKubernetesClient(client)
        .withCloseClientOnStop(false)
        .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry))
        .withStopOnInformerErrorDuringStartup(true)
        .withCacheSyncTimeout(cacheSyncTimeout)
        .withReconciliationTerminationTimeout(terminationTimeout)
        .withInformerStoppedHandler((informer, ex) -> {
          if (ex != null && informer.hasSynced() && !stopping) {
            LOG.error("an informer stopped for good ({}): stopping the operator", StartFailure.describe(ex));
            requestStop(1);
          }
        });
    if (leaderElection) {
      o.withLeaderElectionConfiguration(LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(leaseName)
          .withLeaseNamespace(leaseNamespace)
          .withIdentity(identity)
          .withLeaseDuration(leaseDuration)
          .withRenewDeadline(renewDeadline)
          .withRetryPeriod(retryPeriod)
          // JOSDK would System.exit(1); this command stops cleanly and exits 1 instead.
          .withExitOnStopLeading(false)
          .withLeaderCallbacks(new LeaderCallbacks(this::onStartLeading, this::onStopLeading, this::onNewLeader))
          .build());
    }
  }

  private void onStartLeading() {
    everLed.set(true);
    leading.set(true);
    LOG.info("leading: Lease {}/{} held by {}; reconciling", leaseNamespace, leaseName, identity);
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
    if (!stopping && was) {
      LOG.error("lost the Lease {}/{}: stopping so that only the new leader reconciles", leaseNamespace, leaseName);
      requestStop(1);
    }
  }

  private void onNewLeader(String leader) {
    currentLeader.set(leader);
    if (leader != null && !leader.equals(identity)) {
      LOG.info("leader is {}; standing by", leader);
    }
  }

  // --- start-up checks -------------------------------------------------------------------------

  private Config clientConfig() throws StartFailure {
    if (kubeconfig != null) {
      if (!Files.isRegularFile(kubeconfig) || !Files.isReadable(kubeconfig)) {
        throw new StartFailure(2, "cannot read kubeconfig " + kubeconfig);
      }
      Config c;
      try {
        c = Config.fromKubeconfig(kubeconfig.toFile());
      } catch (RuntimeException e) {
        throw new StartFailure(2, "kubeconfig " + kubeconfig + " is not usable: " + StartFailure.describe(e), e);
      }
      if (c.getCurrentContext() == null) {
        throw new StartFailure(2, "kubeconfig " + kubeconfig + " has no current context");
      }
      return c;
    }
    try {
      return Config.autoConfigure(null);
    } catch (RuntimeException e) {
      throw new StartFailure(2, "cannot configure the Kubernetes client: " + StartFailure.describe(e), e);
    }
  }

  /** Start-up checks fail fast: no retries, short timeouts. */
  private static Config probeConfig(Config config) {
    return new ConfigBuilder(config)
        .withRequestRetryBackoffLimit(0)
        .withConnectionTimeout(10_000)
        .withRequestTimeout(15_000)
        .build();
  }

  private static void checkReachable(KubernetesClient probe, String url) throws StartFailure {
    try {
      probe.getKubernetesVersion();
    } catch (RuntimeException e) {
      throw new StartFailure(1, "cannot reach the Kubernetes API at " + url + ": " + StartFailure.describe(e), e);
    }
  }

  private void installCrds(KubernetesClient probe, List<RequiredCrd> crds) throws StartFailure {
    for (RequiredCrd crd : crds) {
      CustomResourceDefinition def;
      try (InputStream in = OperatorCommand.class.getClassLoader().getResourceAsStream(crd.resource())) {
        if (in == null) {
          throw new StartFailure(1, "the CRD " + crd.name() + " is not in this build (" + crd.resource() + " missing)");
        }
        def = probe.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
      } catch (IOException e) {
        throw new StartFailure(1, "cannot read " + crd.resource() + ": " + e.getMessage(), e);
      }
      try {
        probe.apiextensions().v1().customResourceDefinitions().resource(def)
            .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
        probe.apiextensions().v1().customResourceDefinitions().withName(crd.name()).waitUntilCondition(
            c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null
                && c.getStatus().getConditions().stream()
                    .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())),
            60, TimeUnit.SECONDS);
      } catch (RuntimeException e) {
        throw new StartFailure(1, "cannot install the CRD " + crd.name() + ": " + StartFailure.describe(e), e);
      }
      LOG.info("CRD {} applied and established", crd.name());
    }
  }

  /** Lists one object of each kind: proves the CRD is served and that we may list it. */
  private void checkCrds(KubernetesClient probe, List<RequiredCrd> crds) throws StartFailure {
    for (RequiredCrd crd : crds) {
      try {
        probe.resources(crd.type()).inAnyNamespace().list(new ListOptionsBuilder().withLimit(1L).build());
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          throw new StartFailure(1, "the CRD " + crd.name() + " is not installed in the cluster at "
              + probe.getConfiguration().getMasterUrl()
              + " (apply the CRDs shipped with ipam, or run with --install-crds)", e);
        }
        if (e.getCode() == 401 || e.getCode() == 403) {
          throw new StartFailure(1, "not allowed to list " + crd.name() + " (" + StartFailure.describe(e)
              + "); check the operator's RBAC", e);
        }
        throw new StartFailure(1, "cannot list " + crd.name() + ": " + StartFailure.describe(e), e);
      }
    }
  }

  private void checkLeaseNamespace(KubernetesClient probe) throws StartFailure {
    try {
      if (probe.namespaces().withName(leaseNamespace).get() == null) {
        throw new StartFailure(1, "the namespace " + leaseNamespace + " for the leader-election Lease does not exist"
            + " (create it, or choose another with --namespace)");
      }
    } catch (KubernetesClientException e) {
      throw new StartFailure(1, "cannot read the namespace " + leaseNamespace + " for the leader-election Lease: "
          + StartFailure.describe(e), e);
    }
  }

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

  // --- HTTP, metrics, health ---------------------------------------------------------------------

  private void startHttp() throws StartFailure {
    InetSocketAddress address;
    try {
      address = new InetSocketAddress(InetAddress.getByName(bindAddress), httpPort);
    } catch (UnknownHostException e) {
      throw new StartFailure(2, "--bind-address " + bindAddress + " is not an address");
    }
    try {
      http = ProbeServer.start(address, this::liveness, this::readiness, registry::scrape);
    } catch (IOException e) {
      throw new StartFailure(1, "cannot serve HTTP on " + bindAddress + ":" + httpPort + ": " + StartFailure.describe(e), e);
    }
  }

  private void bindJvmMetrics() {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    gcMetrics = new JvmGcMetrics();
    gcMetrics.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    Gauge.builder("ipam_operator_leader", leading, b -> b.get() ? 1 : 0)
        .description("1 while this replica holds the leader-election Lease (always 0 without leader election)")
        .register(registry);
  }

  /** Alive unless stopping: a replica that is still starting or standing by is alive. */
  Probe liveness() {
    return stopping ? Probe.failing("stopping") : Probe.ok("ok");
  }

  /** Ready once started with every informer synced and watching, leader or standby. */
  Probe readiness() {
    if (stopping) {
      return Probe.failing("stopping");
    }
    Operator op = operator;
    if (op == null || !operatorStarted) {
      return Probe.failing("starting: caches not synced yet");
    }
    RuntimeInfo info = op.getRuntimeInfo();
    if (!info.isStarted()) {
      return Probe.failing("not started");
    }
    if (!info.allEventSourcesAreHealthy()) {
      List<String> bad = new ArrayList<>();
      for (Map.Entry<String, Map<String, EventSourceHealthIndicator>> c : info.unhealthyEventSources().entrySet()) {
        c.getValue().keySet().forEach(es -> bad.add(c.getKey() + "/" + es));
      }
      return Probe.failing("event sources not healthy: " + String.join(", ", bad));
    }
    if (!leaderElection) {
      return Probe.ok("ok");
    }
    if (leading.get()) {
      return Probe.ok("ok: leader");
    }
    String leader = currentLeader.get();
    return Probe.ok("ok: standby" + (leader == null || leader.isEmpty() ? "" : ", leader is " + leader));
  }

  // --- stop --------------------------------------------------------------------------------------

  private void teardown() {
    stopping = true;
    if (auditLoop != null) {
      auditLoop.close();
    }
    Operator op = operator;
    if (op != null) {
      try {
        op.stop();
      } catch (RuntimeException e) {
        LOG.warn("stopping the controllers: {}", StartFailure.describe(e));
      }
      if (leaderElection && everLed.get()) {
        releaseLease();
      }
    }
    leading.set(false);
    if (http != null) {
      http.close();
    }
    if (client != null) {
      client.close();
    }
    if (gcMetrics != null) {
      gcMetrics.close();
    }
    if (registry != null) {
      registry.close();
    }
    if (op != null) {
      LOG.info("ipam operator stopped");
    }
  }

  /**
   * Hands the Lease back after the controllers stopped, as client-go's ReleaseOnCancel does: a
   * standby takes over at its next retry instead of waiting for the lease to expire. Guarded by the
   * Lease's resourceVersion, so a Lease someone else holds by now is left alone.
   */
  private void releaseLease() {
    try {
      Lease lease = client.resources(Lease.class).inNamespace(leaseNamespace).withName(leaseName).get();
      if (lease == null || lease.getSpec() == null || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return;
      }
      String now = MICRO_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
      String patch = "{\"metadata\":{\"resourceVersion\":\"" + lease.getMetadata().getResourceVersion() + "\"},"
          + "\"spec\":{\"holderIdentity\":null,\"leaseDurationSeconds\":1,\"renewTime\":\"" + now + "\"}}";
      client.resources(Lease.class).inNamespace(leaseNamespace).withName(leaseName)
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      LOG.info("released Lease {}/{}", leaseNamespace, leaseName);
    } catch (KubernetesClientException e) {
      LOG.warn("could not release Lease {}/{}: {}; a standby takes over when it expires", leaseNamespace, leaseName,
          StartFailure.describe(e));
    }
  }
}
