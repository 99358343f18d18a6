package org.ipamoperators.cli.operator;

import io.javaoperatorsdk.operator.RuntimeInfo;
import io.javaoperatorsdk.operator.health.EventSourceHealthIndicator;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Metrics;
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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.ipamoperators.cli.ProbeServer;
import org.ipamoperators.cli.ProbeServer.Probe;
import org.ipamoperators.cli.StartFailure;

/**
 * {@code ipam operator}'s {@code /healthz}, {@code /readyz} and {@code /metrics}: the Prometheus registry the
 * controllers record into, with the JVM's meters and {@code ipam_operator_leader}, and the HTTP port serving them.
 */
final class OperatorEndpoints implements AutoCloseable {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
  private volatile ProbeServer http;
  private final AtomicBoolean stoppedServing = new AtomicBoolean();

  OperatorEndpoints(LeaseElection election) {
    Metrics.globalRegistry.add(registry); // providers found by ServiceLoader record here
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    gcMetrics.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    Gauge.builder("ipam_operator_leader", election, e -> e.isLeader() ? 1 : 0)
        .description("1 while this replica holds the leader-election Lease (always 0 without leader election)")
        .register(registry);
  }

  PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Serves the probes and the registry's scrape on {@code bindAddress:port}. */
  void serve(String bindAddress, int port, Supplier<Probe> liveness, Supplier<Probe> readiness) throws StartFailure {
    InetSocketAddress address;
    try {
      address = new InetSocketAddress(InetAddress.getByName(bindAddress), port);
    } catch (UnknownHostException e) {
      throw new StartFailure(2, "--bind-address " + bindAddress + " is not an address");
    }
    try {
      http = ProbeServer.start(address, liveness, readiness, registry::scrape);
    } catch (IOException e) {
      throw new StartFailure(1, "cannot serve HTTP on " + bindAddress + ":" + port + ": " + StartFailure.describe(e),
          e);
    }
  }

  /** The port served on, once serving; else -1. */
  int port() {
    ProbeServer h = http;
    return h == null ? -1 : h.address().getPort();
  }

  /** Ready once every informer is synced and watching; then as the election says (leader or standby). */
  static Probe readiness(RuntimeInfo info, LeaseElection election) {
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
    return election.ready();
  }

  /** Stops serving HTTP. */
  void stopServing() {
    ProbeServer h = http;
    if (h != null && stoppedServing.compareAndSet(false, true)) {
      h.close();
    }
  }

  /** Stops serving and closes the meters. */
  @Override
  public void close() {
    stopServing();
    gcMetrics.close();
    registry.close();
  }
}
