package org.ipamoperators.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What {@link ImageAotTraining} asks each controller to reconcile: one object of each kind it serves (the
 * reliability runs' fixtures), and how its reconcile shows. Each call takes its own addresses and names.
 */
final class AotTrainingObjects {
  private int next;

  /** Creates the controller's objects in {@code ns}; the result tells whether its reconcile shows yet. */
  BooleanSupplier create(KubernetesClient client, String ns, String controller) {
    int n = next++;
    String name = ns + "-" + controller;
    switch (controller) {
      case "vip" -> {
        ReliabilityFixtures.ipGroup(client, name, "198.18.40." + 16 * (n % 16) + "/28");
        ReliabilityFixtures.loadBalancer(client, ns, name);
        return () -> !Shown.loadBalancerIps(client, ns, "").isEmpty();
      }
      case "egressip" -> {
        ReliabilityFixtures.egressIpam(client, name, "198.18.41." + 16 * (n % 16) + "/28", name + "-node",
            "aot-zone-" + n);
        ReliabilityFixtures.optedInNamespace(client, name + "-ns", name, name);
        return () -> !Shown.egressIps(client, "burst", name, "").isEmpty();
      }
      case "keepalived" -> {
        List<String> groups = List.of(name);
        ReliabilityFixtures.keepalivedGroups(client, ns, name + "-node", "aot-keepalived-" + n, groups);
        ReliabilityFixtures.keepalivedService(client, ns, name, name, "198.18.42." + (n + 1));
        return () -> !Shown.routerIds(client, ns, groups).isEmpty();
      }
      default -> {
        return () -> true; // eip: no EC2 at build time; its informers and start-up are what is trained
      }
    }
  }
}
