package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerStatus;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;

/**
 * Issue 13, migration: IPClaims as the operator wrote them before the claim index (labels
 * controller and pool, a shared claim's members in its annotation), with Services showing their
 * addresses, and then the new operator starts. Nothing to convert: every claim is used as it is
 * (same uid, same resourceVersion: not rewritten, not re-created), no claim is added, and every
 * Service keeps its address.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class ExistingClaimsIT {
  @Test
  void claimsOfTheEarlierFormatAreUsedAsTheyAre(KubeApiServer server, KubernetesClient client) {
    VipCluster cluster = new VipCluster(client);
    String ns = client.getNamespace();
    cluster.group("g", "192.0.2.0/28", List.of());
    Map<String, String> address = Map.of("one", "192.0.2.5", "two", "192.0.2.9", "web", "192.0.2.3",
        "web-tls", "192.0.2.3");
    for (String name : List.of("one", "two")) {
      Service s = cluster.create(cluster.lb(name).editMetadata().withFinalizers(VipAnnotations.FINALIZER).endMetadata());
      claim(client, address.get(name), new ClaimOwner("vip", "Service", ns, name, s.getMetadata().getUid()), null);
      show(client, name, address.get(name));
    }
    StringBuilder members = new StringBuilder("[");
    for (String name : List.of("web", "web-tls")) {
      int port = name.equals("web") ? 80 : 443;
      Service s = cluster.create(cluster.lb(name).editMetadata().withFinalizers(VipAnnotations.FINALIZER)
          .withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "site")).endMetadata()
          .editSpec().editFirstPort().withPort(port).endPort().endSpec());
      members.append(members.length() > 1 ? "," : "").append("{\"service\":\"").append(ns).append('/').append(name)
          .append("\",\"uid\":\"").append(s.getMetadata().getUid()).append("\",\"ports\":[\"TCP/").append(port)
          .append("\"],\"backend\":\"\"}");
      show(client, name, address.get(name));
    }
    claim(client, "192.0.2.3", new ClaimOwner("vip", "SharingKey", null, "site", null), members.append(']').toString());
    Map<String, String> before = versions(client);

    Operator operator = VipCluster.startOperator(server);
    try {
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        for (String name : address.keySet()) {
          var c = cluster.condition(name);
          assertThat(c).as(name).isNotNull();
          assertThat(c.getStatus()).as(name).isEqualTo("True");
        }
      });
      for (String name : address.keySet()) {
        assertThat(cluster.ingress(name)).as(name + ": %s; events %s; claims %s", cluster.condition(name),
            cluster.events(name).stream().map(e -> e.getReason() + ": " + e.getMessage()).toList(), versions(client))
            .containsExactly(address.get(name));
      }
      assertThat(versions(client)).isEqualTo(before);
    } finally {
      operator.stop();
      cluster.close();
    }
  }

  /** A claim exactly as ClusterLedger (or, with members, SharedClaims) created it before. */
  private static void claim(KubernetesClient client, String ip, ClaimOwner owner, String members) {
    Map<String, String> labels = new TreeMap<>(Map.of(ClusterLedger.LABEL_CONTROLLER, "vip",
        ClusterLedger.LABEL_POOL, "ipgroup-g-" + "x"));
    labels.put(ClusterLedger.LABEL_POOL, org.ipamoperators.controller.common.ledger.ClaimNames.labelValue("ipgroup/g"));
    if (members != null) {
      labels.put("ipam.ipamoperators.org/sharing-key", owner.name());
    }
    IPClaim c = IPClaim.of(ip, new IPClaimSpec(ip, "ipgroup/g", owner), labels);
    if (members != null) {
      c.getMetadata().setAnnotations(new HashMap<>(Map.of(VipAnnotations.SHARING_MEMBERS, members)));
    }
    client.resource(c).create();
  }

  private static void show(KubernetesClient client, String service, String ip) {
    client.services().withName(service).editStatus(s -> {
      s.setStatus(new ServiceStatus(List.of(), new LoadBalancerStatus(List.of(new LoadBalancerIngressBuilder()
          .withIp(ip).build()))));
      return s;
    });
  }

  /** Claim name to uid and resourceVersion. */
  private static Map<String, String> versions(KubernetesClient client) {
    Map<String, String> out = new TreeMap<>();
    for (IPClaim c : client.resources(IPClaim.class).list().getItems()) {
      out.put(c.getMetadata().getName(), c.getMetadata().getUid() + "@" + c.getMetadata().getResourceVersion());
    }
    return out;
  }
}
