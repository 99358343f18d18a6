package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.VipControllers;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One planner (issue 12) for controller-vip: {@code ipam plan} over a cluster's objects says what
 * the controller then does. The example file is applied to a real apiserver, the objects read back
 * as {@code kubectl get -o yaml} would print them are planned, then the controller runs, and every
 * LoadBalancer Service of the example must show exactly the addresses the plan gave it.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class VipPlanMatchesOperatorIT {
  private static final Path EXAMPLE = Path.of("..", "examples", "vip-objects.yaml");
  private static final String NS = "shop";

  @Test
  void theControllerDoesWhatIpamPlanSaid(KubeApiServer server, KubernetesClient client, @TempDir Path dir)
      throws Exception {
    List<HasMetadata> applied = new ArrayList<>();
    try {
      apply(client, applied);
      Path dump = dir.resolve("cluster.yaml");
      Files.writeString(dump, dumpAsKubectlWould(client));
      JsonNode plan = PlanRuns.plan(dump);

      Map<String, List<String>> planned = new TreeMap<>();
      Map<String, String> blocked = new TreeMap<>();
      for (JsonNode s : plan.path("services")) {
        if (!NS.equals(s.path("namespace").asText())) {
          continue; // another test's Service in this shared apiserver
        }
        List<String> ips = new ArrayList<>();
        s.path("ingress").forEach(ip -> ips.add(ip.asText()));
        planned.put(s.path("name").asText(), ips);
        for (JsonNode p : s.path("problems")) {
          if (p.path("blocking").asBoolean()) {
            blocked.put(s.path("name").asText(), p.path("reason").asText());
          }
        }
      }
      // The example's own expectations, so that a plan that serves nothing cannot pass.
      assertThat(planned).as("plan of %s: %s", Files.readString(dump), plan).containsOnlyKeys("cart", "checkout", "legacy");
      assertThat(planned.get("checkout")).containsExactly("203.0.113.100");
      assertThat(planned.get("cart")).as("the egress claim on .98 is respected").containsExactly("203.0.113.99");
      assertThat(blocked).containsOnlyKeys("legacy");

      KubernetesClient operatorClient = server.newClient();
      Operator operator = new Operator(o -> o.withKubernetesClient(operatorClient).withCloseClientOnStop(true));
      VipControllers.register(operator, operatorClient, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
      operator.start();
      try {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          Map<String, List<String>> shown = new TreeMap<>();
          Map<String, String> waiting = new TreeMap<>();
          for (Service s : client.services().inNamespace(NS).list().getItems()) {
            if (!"LoadBalancer".equals(s.getSpec().getType())) {
              continue;
            }
            List<String> ips = new ArrayList<>();
            if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
                && s.getStatus().getLoadBalancer().getIngress() != null) {
              s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp).forEach(ips::add);
            }
            shown.put(s.getMetadata().getName(), ips);
            if (s.getStatus() != null && s.getStatus().getConditions() != null) {
              s.getStatus().getConditions().stream()
                  .filter(c -> VipAnnotations.CONDITION.equals(c.getType()) && "False".equals(c.getStatus()))
                  .forEach(c -> waiting.put(s.getMetadata().getName(), c.getReason()));
            }
          }
          assertThat(shown).isEqualTo(planned);
          assertThat(waiting).as("the controller reports what the plan reported").isEqualTo(blocked);
        });
      } finally {
        operator.stop();
      }
    } finally {
      PlanRuns.cleanup(client, applied);
    }
  }

  private static void apply(KubernetesClient client, List<HasMetadata> applied) throws Exception {
    client.resources(IPGroup.class); // registers the custom kinds with the deserializer
    client.resources(IPClaim.class);
    List<HasMetadata> objects = new ArrayList<>();
    for (HasMetadata o : client.load(Files.newInputStream(EXAMPLE)).items()) {
      if (o instanceof KubernetesList l) {
        objects.addAll(l.getItems());
      } else {
        objects.add(o);
      }
    }
    for (HasMetadata o : objects) {
      if (o instanceof Service) {
        // The client of the test defaults to the test's namespace; the example's Services live in its own.
        applied.add(client.resource(o).inNamespace(NS).create());
      } else {
        applied.add(client.resource(o).create());
      }
    }
  }

  /** What {@code kubectl get ipgroups,services,namespaces,ipclaims -A -o yaml} prints. */
  private static String dumpAsKubectlWould(KubernetesClient client) {
    List<HasMetadata> all = new ArrayList<>();
    all.addAll(client.resources(IPGroup.class).list().getItems());
    all.addAll(client.services().inAnyNamespace().list().getItems());
    all.addAll(client.namespaces().list().getItems());
    all.addAll(client.resources(IPClaim.class).list().getItems());
    return PlanRuns.asKubectlWould(client, all);
  }


}
