package org.ipamoperators.egressip.it;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import org.ipamoperators.egressip.EgressIPControllers;

/**
 * The egress controllers alone in a process of their own, for the scale benchmark: its CPU time
 * and peak RSS are then the operator's, not the test's. Argument: a kubeconfig file. Runs until
 * its standard input closes.
 */
public final class EgressOperatorMain {
  private EgressOperatorMain() {}

  public static void main(String[] args) throws Exception {
    Config config = Config.fromKubeconfig(Files.readString(Path.of(args[0])));
    KubernetesClientBuilder builder = new KubernetesClientBuilder().withConfig(config);
    String factory = System.getProperty("ipam.scale.httpClientFactory"); // another fabric8 transport, to compare
    if (factory != null) {
      builder.withHttpClientFactory((io.fabric8.kubernetes.client.http.HttpClient.Factory)
          Class.forName(factory).getDeclaredConstructor().newInstance());
    }
    KubernetesClient client = builder.build();
    Operator operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(true));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    EgressIPControllers.register(operator, client, registry);
    operator.start();
    // JVM start to caches synced: wall time and this process's CPU time (user + system, all threads).
    long cpuNanos = ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    System.out.printf("started: caches synced %d ms after the JVM started, %.2f CPU s%n",
        java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime(), cpuNanos / 1e9);
    while (System.in.read() >= 0) {
      // until the benchmark closes our input
    }
    registry.find("ipam_egressip_reconcile_duration").timers().forEach(t -> System.out.printf(
        "PASSES %s: %d passes, %.1f s in all, longest %.0f ms%n", t.getId().getTag("egressipam"), t.count(),
        t.totalTime(java.util.concurrent.TimeUnit.SECONDS), t.max(java.util.concurrent.TimeUnit.MILLISECONDS)));
    registry.find("ipam_egressip_plan_duration").timers().forEach(t -> System.out.printf(
        "PASSES %s: fetch+decide %.2f s in all, longest %.0f ms; namespaces decided %.0f, reused %.0f%n",
        t.getId().getTag("egressipam"), t.totalTime(java.util.concurrent.TimeUnit.SECONDS),
        t.max(java.util.concurrent.TimeUnit.MILLISECONDS),
        registry.find("ipam_egressip_plan_namespaces").tag("how", "decided").counters().stream()
            .mapToDouble(c -> c.count()).sum(),
        registry.find("ipam_egressip_plan_namespaces").tag("how", "reused").counters().stream()
            .mapToDouble(c -> c.count()).sum()));
    registry.find("ipam_egressip_pass_step_duration").timers().forEach(t -> System.out.printf(
        "PASSES %s: %s %.2f s in all, longest %.0f ms%n", t.getId().getTag("egressipam"), t.getId().getTag("step"),
        t.totalTime(java.util.concurrent.TimeUnit.SECONDS), t.max(java.util.concurrent.TimeUnit.MILLISECONDS)));
    operator.stop();
    System.exit(0);
  }
}
