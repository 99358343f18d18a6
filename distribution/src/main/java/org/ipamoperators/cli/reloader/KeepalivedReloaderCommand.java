package org.ipamoperators.cli.reloader;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.ipamoperators.cli.DurationConverter;
import org.ipamoperators.cli.ProbeServer;
import org.ipamoperators.keepalived.reloader.KeepalivedReloader.Outcome;
import org.ipamoperators.keepalived.reloader.KeepalivedReloader;
import org.ipamoperators.keepalived.reloader.ReloaderOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ipam keepalived-reloader}: the keepalived DaemonSet's init container ({@code --once}) and
 * sidecar. Copies the node's configuration from the mounted ConfigMap to the file keepalived reads,
 * checks it with {@code keepalived --config-test} first and signals keepalived only on a real change;
 * serves {@code /metrics} (reloads, refused configurations, whether keepalived runs, each VRRP
 * instance's state, from a dump asked of keepalived at most once per {@code --states-interval}) and probes.
 */
@Command(name = "keepalived-reloader", mixinStandardHelpOptions = true,
    description = "Keeps a node's keepalived configuration in step with its ConfigMap key (run by the keepalived DaemonSet).")
public final class KeepalivedReloaderCommand implements Callable<Integer> {

  @Option(names = "--source", required = true, description = "the node's key of the mounted ConfigMap")
  Path source;

  @Option(names = "--target", required = true, description = "the file keepalived reads")
  Path target;

  @Option(names = "--pid-file", description = "keepalived's PID file; without it nothing is signalled")
  Path pidFile;

  @Option(names = "--interface-from-ip",
      description = "resolve the VRRP interface on this node as the one routing to this address")
  String interfaceFromIp;

  @Option(names = "--interface-placeholder", defaultValue = "ipam-from-ip",
      description = "the interface name in the source replaced by the resolved one (default: ${DEFAULT-VALUE})")
  String interfacePlaceholder;

  @Option(names = "--keepalived", defaultValue = "keepalived", description = "the binary for --config-test")
  String keepalived;

  @Option(names = "--interval", defaultValue = "1s", converter = DurationConverter.class,
      description = "time between looks at the source (default: ${DEFAULT-VALUE})")
  Duration interval;

  @Option(names = "--once", description = "write the first valid configuration and exit (the init container)")
  boolean once;

  @Option(names = "--metrics-port", description = "serve /metrics, /healthz and /readyz on this port")
  Integer metricsPort;

  @Option(names = "--bind-address", defaultValue = "0.0.0.0",
      description = "address --metrics-port listens on (the DaemonSet passes the pod's address; default: ${DEFAULT-VALUE})")
  String bindAddress;

  @Option(names = "--states-interval", defaultValue = "5s", converter = DurationConverter.class,
      description = "shortest time between two SIGUSR1 dumps of keepalived's VRRP states; scrapes in between get the"
          + " last one (default: ${DEFAULT-VALUE})")
  Duration statesInterval;

  private final AtomicBoolean stop = new AtomicBoolean();

  @Override
  public Integer call() throws Exception {
    ReloaderOptions options = new ReloaderOptions(source, target, Optional.ofNullable(pidFile),
        Optional.ofNullable(interfaceFromIp), interfacePlaceholder, keepalived, interval, once, List.of(),
        statesInterval);
    KeepalivedReloader reloader = new KeepalivedReloader(options);
    if (once) {
      Outcome outcome = reloader.run(() -> true);
      return outcome == Outcome.WRITTEN || outcome == Outcome.UNCHANGED || outcome == Outcome.RELOADED ? 0 : 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop.set(true);
      try {
        stopped.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "keepalived-reloader-stop"));
    AtomicReference<Outcome> last = new AtomicReference<>();
    ProbeServer server = metricsPort == null ? null : serve(reloader, last);
    try {
      while (!stop.get()) {
        last.set(reloader.syncOnce());
        Thread.sleep(interval.toMillis());
      }
      return 0;
    } finally {
      if (server != null) {
        server.close();
      }
      stopped.countDown();
    }
  }

  /** Ends the loop as SIGTERM does. */
  public void stopForTests() {
    stop.set(true);
  }

  private ProbeServer serve(KeepalivedReloader reloader, AtomicReference<Outcome> last) throws IOException {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    FunctionCounter.builder("ipam_keepalived_reloads", reloader, KeepalivedReloader::reloads)
        .description("Configuration changes applied to keepalived with SIGHUP").register(registry);
    FunctionCounter.builder("ipam_keepalived_config_refused", reloader, KeepalivedReloader::refused)
        .description("Configurations keepalived --config-test refused (the running one was kept)").register(registry);
    Gauge.builder("ipam_keepalived_up", reloader, r -> r.keepalivedUp() ? 1 : 0)
        .description("1 while the keepalived process of the PID file runs").register(registry);
    // Each VRRP instance's state: keepalived dumps its data on SIGUSR1. Also under keepalived_exporter's name,
    // which existing dashboards and alerts use.
    List<MultiGauge> vrrp = java.util.stream.Stream.of("ipam_keepalived_vrrp_state", "keepalived_vrrp_state")
        .map(name -> MultiGauge.builder(name)
            .description("VRRP instance state: 0 INIT, 1 BACKUP, 2 MASTER, 3 FAULT").register(registry)).toList();
    return ProbeServer.start(new InetSocketAddress(bindAddress, metricsPort),
        () -> ProbeServer.Probe.ok("ok"),
        () -> last.get() == null || last.get() == Outcome.SOURCE_MISSING || last.get() == Outcome.INTERFACE_UNRESOLVED
            ? ProbeServer.Probe.failing("no configuration applied yet: " + last.get())
            : ProbeServer.Probe.ok("ok: " + last.get()),
        () -> {
          List<MultiGauge.Row<?>> rows = vrrpRows(reloader);
          vrrp.forEach(g -> g.register(rows, true));
          return registry.scrape();
        });
  }

  /** The running keepalived's VRRP instances (a dump at most once per --states-interval), none while it does not run. */
  private static List<MultiGauge.Row<?>> vrrpRows(KeepalivedReloader reloader) {
    return reloader.vrrpStates().stream()
        .<MultiGauge.Row<?>>map(s -> MultiGauge.Row.of(Tags.of("name", s.name(), "vrid",
            Integer.toString(s.virtualRouterId()), "intf", s.networkInterface().orElse("")), s.state().code()))
        .toList();
  }
}
