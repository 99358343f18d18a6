package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One planner (issue 12, review M1): {@code ipam plan} over a cluster's objects says what
 * controller-egressip then does. The example file is applied to a real apiserver with OpenShift
 * SDN's kinds; the objects are read back as {@code kubectl get -o yaml} would print them and
 * planned; then the controller runs, and every namespace's egressips and every node's HostSubnet
 * must be exactly what the plan said.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class PlanMatchesOperatorIT {
  private static final Path EXAMPLE = Path.of("..", "examples", "egress-objects.yaml");

  @Test
  void theControllerDoesWhatIpamPlanSaid(KubeApiServer server, KubernetesClient client, @TempDir Path dir)
      throws Exception {
    List<HasMetadata> applied = new ArrayList<>();
    try {
      apply(client, applied);
      Path dump = dir.resolve("cluster.yaml");
      Files.writeString(dump, dumpAsKubectlWould(client));
      JsonNode plan = PlanRuns.plan(dump);
      JsonNode ipam = null;
      for (JsonNode i : plan.path("egressIPAMs")) {
        ipam = "egress-two-zones".equals(i.path("name").asText()) ? i : ipam;
      }
      assertThat(ipam).as("the example's EgressIPAM is planned").isNotNull();

      Map<String, String> planned = new TreeMap<>();
      ipam.path("namespaces").forEach(n -> planned.put(n.path("name").asText(), n.path("annotation").asText()));
      Map<String, Set<String>> hosts = new TreeMap<>();
      ipam.path("nodes").forEach(n -> {
        if (!n.path("name").asText().startsWith("worker-")) {
          return; // another test's node in this shared apiserver
        }
        Set<String> ips = new TreeSet<>();
        n.path("hosts").forEach(ip -> ips.add(ip.asText()));
        hosts.put(n.path("name").asText(), ips);
      });
      // The example's own expectations, so that a plan that serves nothing cannot pass.
      assertThat(planned).containsOnlyKeys("billing", "payments");
      assertThat(planned.get("payments")).isEqualTo("203.0.113.69,203.0.113.87");
      assertThat(hosts.get("worker-b2")).as("a failed node hosts nothing").isEmpty();

      KubernetesClient operatorClient = server.newClient();
      Operator operator = new Operator(o -> o.withKubernetesClient(operatorClient).withCloseClientOnStop(true));
      org.ipamoperators.egressip.EgressIPControllers.register(operator, operatorClient,
          new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
      operator.start();
      try {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          Map<String, String> done = new TreeMap<>();
          for (String ns : List.of("billing", "payments", "reports")) {
            String v = client.namespaces().withName(ns).get().getMetadata().getAnnotations().get(EgressAnnotations.EGRESSIPS);
            if (!"reports".equals(ns)) {
              done.put(ns, v);
            } else {
              assertThat(v).as("the rejected namespace keeps what it wrote").isEqualTo("203.0.113.73");
            }
          }
          assertThat(done).isEqualTo(planned);
          Map<String, Set<String>> hosted = new TreeMap<>();
          for (HostSubnet h : client.resources(HostSubnet.class).list().getItems()) {
            if (!hosts.containsKey(h.getMetadata().getName())) {
              continue;
            }
            hosted.put(h.getMetadata().getName(), new TreeSet<>(h.getEgressIPs() == null ? List.of() : h.getEgressIPs()));
          }
          assertThat(hosted).isEqualTo(hosts);
        });
      } finally {
        operator.stop();
      }
      // Planned again from the cluster the controller left (its claims are IPBlock entries): the
      // same addresses, each already claimed, nothing to release.
      Files.writeString(dump, dumpAsKubectlWould(client));
      JsonNode again = null;
      for (JsonNode i : PlanRuns.plan(dump).path("egressIPAMs")) {
        again = "egress-two-zones".equals(i.path("name").asText()) ? i : again;
      }
      assertThat(again).isNotNull();
      Map<String, String> replanned = new TreeMap<>();
      again.path("namespaces").forEach(n -> replanned.put(n.path("name").asText(), n.path("annotation").asText()));
      assertThat(replanned).isEqualTo(planned);
      again.path("namespaces").forEach(n -> n.path("addresses").forEach(a -> assertThat(a.path("toClaim").asBoolean())
          .as("%s of %s is claimed already", a.path("address").asText(), n.path("name").asText()).isFalse()));
      assertThat(again.path("release")).isEmpty();
    } finally {
      cleanup(client, applied);
    }
  }

  private static void apply(KubernetesClient client, List<HasMetadata> applied) throws Exception {
    client.resources(EgressIPAM.class); // registers the custom kinds with the deserializer
    client.resources(IPClaim.class);
    List<HasMetadata> objects = new ArrayList<>();
    for (HasMetadata o : client.load(Files.newInputStream(EXAMPLE)).items()) {
      if (o instanceof KubernetesList l) {
        objects.addAll(l.getItems());
      } else {
        objects.add(o);
      }
    }
    int netid = 100;
    for (HasMetadata o : objects) {
      HasMetadata created = client.resource(o).create();
      applied.add(created);
      if (o instanceof Node n) {
        // The apiserver ignores status on create; a kubelet would report it.
        Node live = client.nodes().withName(n.getMetadata().getName()).get();
        live.setStatus(n.getStatus());
        client.nodes().resource(live).updateStatus();
        int i = applied.size();
        applied.add(client.resource(new HostSubnetBuilder().withNewMetadata().withName(n.getMetadata().getName())
            .endMetadata().withHost(n.getMetadata().getName()).withHostIP("10.255.0." + i)
            .withSubnet("10.128." + i + ".0/23").build()).create());
      } else if (o instanceof Namespace ns) {
        applied.add(client.resource(new NetNamespaceBuilder().withNewMetadata().withName(ns.getMetadata().getName())
            .endMetadata().withNetname(ns.getMetadata().getName()).withNetid((long) netid++).build()).create());
      }
    }
  }

  /** What {@code kubectl get egressipams,nodes,namespaces,ipclaims,ipblocks,hostsubnets -o yaml} prints. */
  private static String dumpAsKubectlWould(KubernetesClient client) {
    List<HasMetadata> all = new ArrayList<>();
    all.addAll(client.resources(EgressIPAM.class).list().getItems());
    all.addAll(client.nodes().list().getItems());
    all.addAll(client.namespaces().list().getItems());
    all.addAll(client.resources(IPClaim.class).list().getItems());
    all.addAll(client.resources(IPBlock.class).list().getItems());
    all.addAll(client.resources(HostSubnet.class).list().getItems());
    all.addAll(client.resources(NetNamespace.class).list().getItems());
    return PlanRuns.asKubectlWould(client, all);
  }


  private static void cleanup(KubernetesClient client, List<HasMetadata> applied) {
    PlanRuns.cleanup(client, applied);
    client.resources(EgressIPAM.class).list().getItems().forEach(i -> client.resource(i).edit(x -> {
      x.getMetadata().setFinalizers(List.of());
      return x;
    }));
  }
}
