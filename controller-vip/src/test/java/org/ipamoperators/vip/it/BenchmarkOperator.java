package org.ipamoperators.vip.it;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.ipamoperators.vip.VipControllers;

/**
 * The VIP operator in a process of its own, for {@link VipScaleBenchmark}: so that its CPU time and
 * peak memory are its own, not the benchmark's. Arguments: a kubeconfig file and the namespace whose
 * Services it serves. Prints {@code SYNCED <epoch ms>} once its caches are synced (java-operator-sdk's
 * start returns then), and runs until its standard input closes.
 */
public final class BenchmarkOperator {
  private BenchmarkOperator() {}

  public static void main(String[] args) throws Exception {
    Config config = Config.fromKubeconfig(Files.readString(Path.of(args[0])));
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    Operator operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(true));
    VipControllers.register(operator, client, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
        Set.of(args[1]));
    operator.start();
    System.out.println("SYNCED " + System.currentTimeMillis());
    System.out.flush();
    while (System.in.read() >= 0) {
      // until the benchmark closes our input
    }
    operator.stop();
    System.exit(0);
  }
}
