package org.ipamoperators.cli.operator;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.ipamoperators.cli.DurationConverter;
import org.ipamoperators.cli.ProbeServer.Probe;
import org.ipamoperators.cli.StartFailure;
import org.ipamoperators.cli.audit.AuditLoop;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.cli.operator.OperatorControllers.Controller;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.egressip.EgressSettings;
import org.ipamoperators.eip.EipSettings;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.vip.VipSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code ipam operator}: runs the chosen controllers against a cluster until stopped, with leader
 * election on a Lease, {@code /healthz}, {@code /readyz} and {@code /metrics} on one HTTP port.
 *
 * <p>Every replica starts its informers and fills its caches; only the holder of the Lease
 * reconciles. A replica with synced caches is ready whether it leads or not, so a standby can take
 * over within one lease duration. SIGTERM (or {@link #stop()}) stops reconciling, waits for
 * reconciles in flight, hands the Lease back so a standby takes over at once, and exits 0. A leader
 * that loses its Lease exits 1 so that it never reconciles next to the new leader.
 *
 * <p>This class holds the options and the start and stop sequence; the parts are {@link OperatorControllers}
 * (which controllers, their settings and CRDs), {@link StartupChecks} (the cluster before starting),
 * {@link LeaseElection} (the Lease) and {@link OperatorEndpoints} (probes and metrics).
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
  public static final String DEFAULT_LEASE = "ipam-operators-leader";
  public static final String FIELD_MANAGER = "ipam-operator";
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

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
      description = "namespace of the leader-election Lease (default: the pod's namespace, else " + LeaseElection.DEFAULT_NAMESPACE + ")")
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
  EgressOptions egressOptions = new EgressOptions();

  @Mixin
  VipOptions vipOptions = new VipOptions();

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
  private volatile boolean stopping;
  private volatile boolean operatorStarted;
  private volatile LeaseElection election;
  private volatile OperatorEndpoints endpoints;
  private volatile KubernetesClient client;
  private volatile Operator operator;
  private volatile AuditLoop auditLoop;
  private OperatorControllers.Settings settings;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    List<Controller> selected;
    try {
      selected = OperatorControllers.select(controllers);
      validateOptions();
      settings = controllerSettings(selected);
    } catch (StartFailure e) {
      return refused(err, e.getMessage(), e.exitCode());
    } catch (IllegalArgumentException | TypeConversionException e) {
      return refused(err, e.getMessage(), 2);
    }
    Thread hook = new Thread(this::onShutdownSignal, "ipam-operator-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      start(selected);
      started.countDown();
      awaitStopRequest();
    } catch (StartFailure e) {
      requestStop(refused(err, e.getMessage(), e.exitCode()));
    } catch (RuntimeException e) {
      LOG.debug("start failed", e);
      requestStop(refused(err, StartFailure.describe(e), 1));
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

  private static int refused(PrintWriter err, String message, int code) {
    err.println("ipam operator: " + message);
    err.flush();
    return code;
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
    OperatorEndpoints e = endpoints;
    return e == null ? -1 : e.port();
  }

  /** The identity this replica writes into the Lease. */
  public String identity() {
    LeaseElection e = election;
    return e == null ? null : e.settings().identity();
  }

  public boolean isLeader() {
    LeaseElection e = election;
    return e != null && e.isLeader();
  }

  /** keepalived's settings as the options give them. */
  public KeepalivedSettings keepalivedSettings() {
    return keepalivedOptions.settings();
  }

  /** egressip's settings as the options give them. */
  public EgressSettings egressSettings() {
    return egressOptions.settings();
  }

  /** vip's settings as the options give them. */
  public VipSettings vipSettings() {
    return vipOptions.settings();
  }

  /** eip's settings as the options give them. */
  public EipSettings eipSettings() {
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

  /** The options picocli cannot check alone; a bad one exits 2. */
  private void validateOptions() throws StartFailure {
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
  }

  /** One settings record per controller that has settings; eip's only when eip runs (it needs CLUSTER_NAME). */
  private OperatorControllers.Settings controllerSettings(List<Controller> selected) {
    boolean eip = selected.stream().anyMatch(c -> c.name().equals("eip"));
    return new OperatorControllers.Settings(egressOptions.settings(), vipOptions.settings(),
        keepalivedOptions.settings(), eip ? eipOptions.settings() : null,
        ProviderJars.loader(egressOptions.providerDir(), System.getenv(ProviderJars.ENV)));
  }

  private LeaseElection.Settings leaseSettings() {
    return new LeaseElection.Settings(leaderElection, leaseName,
        namespace != null ? namespace : LeaseElection.defaultNamespace(),
        leaderIdentity != null ? leaderIdentity : LeaseElection.defaultIdentity(),
        leaseDuration, renewDeadline, retryPeriod);
  }

  /** Settings, metrics and HTTP, start-up checks on the cluster, then the controllers and the audit. */
  private void start(List<Controller> selected) throws StartFailure {
    Config config = StartupChecks.clientConfig(kubeconfig);
    LeaseElection.Settings lease = leaseSettings();
    election = new LeaseElection(lease, () -> requestStop(1), () -> stopping);
    endpoints = new OperatorEndpoints(election);
    endpoints.serve(bindAddress, httpPort, this::liveness, this::readiness);
    List<String> names = selected.stream().map(Controller::name).toList();
    String where = lease.namespace() + "/" + lease.name();
    LOG.info("ipam operator: controllers {}, cluster {}, {}, /healthz /readyz /metrics on {}:{}", names,
        config.getMasterUrl(), leaderElection ? "leader election on Lease " + where + " as " + lease.identity()
            : "no leader election", bindAddress, boundHttpPort());
    new StartupChecks(OperatorControllers.crds(selected), installCrds, leaderElection ? lease.namespace() : null,
        () -> stopping).run(config);
    if (stopping) {
      return;
    }
    startControllers(config, selected);
    if (audit) {
      startAudit(names);
    }
    LOG.info("ipam operator started: caches synced {}{}", StartupCost.sinceJvmStart(), leaderElection
        ? "; electing a leader on Lease " + where : "; reconciling");
  }

  /** Registers the controllers and starts their informers; without leader election they run at once. */
  private void startControllers(Config config, List<Controller> selected) throws StartFailure {
    client = new KubernetesClientBuilder().withConfig(config).build();
    Operator op = new Operator(this::configure);
    for (Controller c : selected) {
      election.whenLeading(c.registrar().register(op, client, endpoints.registry(), settings));
    }
    operator = op;
    try {
      op.start();
    } catch (RuntimeException e) {
      LOG.debug("operator start failed", e);
      throw new StartFailure(1, "could not start the controllers: " + StartFailure.describe(e), e);
    }
    operatorStarted = true;
    election.startedWithoutElection();
  }

  /** Audits the ledgers of the controllers that have one, on the leader only. */
  private void startAudit(List<String> controllerNames) {
    Set<String> audited = new HashSet<>(controllerNames);
    audited.retainAll(ClusterFacts.ALL);
    LeaseElection e = election;
    auditLoop = new AuditLoop(client, endpoints.registry(), audited, auditInterval,
        AuditOptions.DEFAULT_LEAK_GRACE, e::leads, Clock.systemUTC(), settings.egress())
        .elasticIps(settings.eip()).vip(settings.vip());
    auditLoop.start();
  }

  private void configure(ConfigurationServiceOverrider o) {
    o.withKubernetesClient(client)
        .withCloseClientOnStop(false)
        .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(endpoints.registry()))
        .withStopOnInformerErrorDuringStartup(true)
        .withCacheSyncTimeout(cacheSyncTimeout)
        .withReconciliationTerminationTimeout(terminationTimeout)
        .withInformerStoppedHandler((informer, ex) -> {
          if (ex != null && informer.hasSynced() && !stopping) {
            LOG.error("an informer stopped for good ({}): stopping the operator", StartFailure.describe(ex));
            requestStop(1);
          }
        });
    election.configure(o);
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
    return OperatorEndpoints.readiness(op.getRuntimeInfo(), election);
  }

  /** Stops the audit and the controllers, hands the Lease back, then closes HTTP, the client and the meters. */
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
      election.stepDown(client);
    }
    if (election != null) {
      election.stopped();
    }
    if (endpoints != null) {
      endpoints.stopServing();
    }
    if (client != null) {
      client.close();
    }
    if (endpoints != null) {
      endpoints.close();
    }
    if (op != null) {
      LOG.info("ipam operator stopped");
    }
  }
}
