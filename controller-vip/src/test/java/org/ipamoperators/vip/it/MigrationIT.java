package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.legacy.LegacyKinds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Taking over from the old operator, against a real API server with its objects created first:
 * its IP objects are adopted at start (no Service changes address, no adopted address is handed
 * out again, leaked ones are not adopted), its finalizer is removed (none replaces it), and a legacy VirtualIP is
 * migrated by the {@code virtualips.paas.org/migrate} annotation.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml", "crds/ips.paas.org.yaml", "crds/virtualips.paas.org.yaml"})
class MigrationIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private VipCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;
  private String ns;

  @BeforeEach
  void setUp(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
    this.ns = client.getNamespace();
    cluster = new VipCluster(client);
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).list().getItems().forEach(v -> {
      client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName(v.getMetadata().getName())
          .edit(x -> {
            x.getMetadata().setFinalizers(List.of());
            return x;
          });
    });
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).delete();
  }

  /** A Service as the old operator left it: its address in the status, its finalizer. */
  private void oldService(String name, String ip) {
    cluster.create(cluster.lb(name).editMetadata().withFinalizers(VipAnnotations.LEGACY_FINALIZER).endMetadata());
    client.services().withName(name).editStatus(s -> {
      s.getStatus().getLoadBalancer().setIngress(List.of(new LoadBalancerIngressBuilder().withIp(ip).build()));
      return s;
    });
  }

  private void ipObject(String ip, String labelKey, String labelValue, String owner) {
    GenericKubernetesResource o = new GenericKubernetesResourceBuilder().withApiVersion("paas.org/v1").withKind("IP")
        .withNewMetadata().withName(ip).withLabels(Map.of(labelKey, labelValue))
        .withAnnotations(Map.of(LegacyKinds.OWNER_ANNOTATION, owner)).endMetadata().build();
    client.genericKubernetesResources(LegacyKinds.IP).resource(o).create();
  }

  private GenericKubernetesResource virtualIp(String name, String service, String ip) {
    GenericKubernetesResource v = new GenericKubernetesResourceBuilder().withApiVersion("paas.org/v1").withKind("VirtualIP")
        .withNewMetadata().withName(name).withNamespace(ns)
        .withFinalizers(LegacyKinds.VIP_IP_FINALIZER, LegacyKinds.VIP_SERVICE_FINALIZER).endMetadata().build();
    v.getAdditionalProperties().put("spec", Map.of("service", service));
    v = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).resource(v).create();
    Map<String, Object> status = new HashMap<>();
    status.put("state", "Valid");
    status.put("ip", ip);
    status.put("service", service);
    status.put("clonedService", name + "-keepalived-clone");
    status.put("gsm", "g1");
    status.put("keepalivedGroup", "keepalived-operator/kg");
    v.getAdditionalProperties().put("status", status);
    return client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).resource(v).updateStatus();
  }

  /** The keepalived clone the old operator made for a VirtualIP: its external IP, an owner reference to it. */
  private void clone(GenericKubernetesResource v, String ip) {
    cluster.create(cluster.lb(v.getMetadata().getName() + "-keepalived-clone").editMetadata()
        .addNewOwnerReference().withApiVersion("paas.org/v1").withKind("VirtualIP").withName(v.getMetadata().getName())
        .withUid(v.getMetadata().getUid()).endOwnerReference().endMetadata()
        .editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null).withExternalIPs(ip).endSpec());
  }

  private GenericKubernetesResource virtualIp(String name) {
    return client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName(name).get();
  }

  @SuppressWarnings("unchecked")
  private static String status(GenericKubernetesResource v, String field) {
    Object s = v.getAdditionalProperties().get("status");
    return s instanceof Map<?, ?> m && m.get(field) != null ? m.get(field).toString() : null;
  }

  @Test
  void theOldOperatorsIpObjectsAreAdoptedSoNoServiceChangesAddress() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    oldService("old-a", "192.0.2.5");
    oldService("old-b", "192.0.2.1");
    ipObject("192.0.2.5", LegacyKinds.LABEL_IPGROUP, "p1", ns + "/old-a");
    ipObject("192.0.2.1", LegacyKinds.LABEL_IPGROUP, "p1", ns + "/old-b");
    ipObject("192.0.2.9", LegacyKinds.LABEL_IPGROUP, "p1", ns + "/long-gone"); // leaked by the old operator
    cluster.create(cluster.lb("dying").editMetadata().withFinalizers(VipAnnotations.LEGACY_FINALIZER).endMetadata());
    cluster.delete("dying");
    cluster.create(cluster.lb("new"));
    assertThat(cluster.service("dying").getMetadata().getDeletionTimestamp()).isNotNull();

    operator = VipCluster.startOperator(server);
    // Adopted before any Service is served: the new one cannot get .1 or .5.
    IPClaim a = cluster.claim("192.0.2.5");
    assertThat(a.getSpec().owner().name()).isEqualTo("old-a");
    assertThat(a.getSpec().pool()).isEqualTo("ipgroup/p1");
    assertThat(cluster.claim("192.0.2.1").getSpec().owner().name()).isEqualTo("old-b");
    assertThat(cluster.claim("192.0.2.9")).isNull();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("new")).containsExactly("192.0.2.2");
      assertThat(cluster.service("dying")).isNull();
      // The old operator's finalizer is gone and none replaces it (claims are released on delete events).
      assertThat(cluster.service("old-a").getMetadata().getFinalizers()).isNullOrEmpty();
      assertThat(cluster.service("old-b").getMetadata().getFinalizers()).isNullOrEmpty();
    });
    assertThat(cluster.ingress("old-a")).containsExactly("192.0.2.5");
    assertThat(cluster.ingress("old-b")).containsExactly("192.0.2.1");
    // Deleting an adopted Service releases its address as usual.
    cluster.delete("old-a");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.service("old-a")).isNull();
      assertThat(cluster.claim("192.0.2.5")).isNull();
    });
  }

  @Test
  void aLegacyVirtualIpIsMigratedByTheAnnotationAndABlockedOneSaysWhy() {
    cluster.groupOf("p2", List.of("198.51.100.0/28"), null, null); // created from the GroupSegmentMapping
    cluster.create(cluster.lb("app").editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null).endSpec());
    clone(virtualIp("legacy", "app", "198.51.100.4"), "198.51.100.4");
    ipObject("198.51.100.4", LegacyKinds.LABEL_GSM, "g1", ns + "/legacy");
    cluster.create(cluster.lb("blocked"));
    virtualIp("blocked-vip", "blocked", "198.51.100.6");
    ipObject("198.51.100.6", LegacyKinds.LABEL_GSM, "g1", ns + "/blocked-vip");
    // An address the old operator gave a Service that is no LoadBalancer any more, and no VirtualIP stands for.
    cluster.create(cluster.lb("was-lb").editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null).endSpec());
    ipObject("198.51.100.8", LegacyKinds.LABEL_GSM, "g1", ns + "/was-lb");

    operator = VipCluster.startOperator(server);
    // The VirtualIP's address is reserved for its Service from the start.
    assertThat(cluster.claim("198.51.100.4").getSpec().owner().name()).isEqualTo("app");
    cluster.create(cluster.lb("fresh"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("fresh")).hasSize(1));
    assertThat(cluster.ingress("fresh")).doesNotContain("198.51.100.4", "198.51.100.6");
    // The orphan sweep hands the non-LoadBalancer Services holding claims to their reconcile, which lets
    // go of was-lb's address but keeps the one the VirtualIP still reserves for app.
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.claim("198.51.100.8")).isNull());
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(cluster.claim("198.51.100.4").getSpec().owner().name()).isEqualTo("app"));
    assertThat(status(virtualIp("legacy"), "state")).isEqualTo("Valid"); // nothing happens unasked

    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName("legacy").edit(v -> {
      v.getMetadata().setAnnotations(Map.of(LegacyKinds.MIGRATE_ANNOTATION, ""));
      return v;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      GenericKubernetesResource v = virtualIp("legacy");
      assertThat(status(v, "state")).isEqualTo("Migrated");
      assertThat(status(v, "message")).isEqualTo("VirtualIP has been migrated");
      assertThat(status(v, "clonedService")).isNull();
      assertThat(v.getMetadata().getFinalizers()).isNullOrEmpty();
    });
    Service app = cluster.service("app");
    assertThat(app.getSpec().getType()).isEqualTo("LoadBalancer");
    assertThat(app.getSpec().getLoadBalancerIP()).isNull(); // the VirtualIP asked for no specific address
    assertThat(cluster.ingress("app")).containsExactly("198.51.100.4");
    assertThat(cluster.service("legacy-keepalived-clone")).isNull();
    assertThat(cluster.claim("198.51.100.4").getSpec().owner().name()).isEqualTo("app");
    GenericKubernetesResource ipObject = client.genericKubernetesResources(LegacyKinds.IP).withName("198.51.100.4").get();
    assertThat(ipObject.getMetadata().getLabels()).containsEntry(LegacyKinds.LABEL_IPGROUP, "p2");
    assertThat(ipObject.getMetadata().getAnnotations()).containsEntry(LegacyKinds.OWNER_ANNOTATION, ns + "/app");

    // The target is already a LoadBalancer: the migration waits in "preparing" and says why.
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName("blocked-vip").edit(v -> {
      v.getMetadata().setAnnotations(Map.of(LegacyKinds.MIGRATE_ANNOTATION, "true"));
      return v;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      GenericKubernetesResource v = virtualIp("blocked-vip");
      assertThat(status(v, "state")).isEqualTo(LegacyKinds.PREPARING);
      assertThat(status(v, "message")).contains("service is already of type LoadBalancer");
      assertThat(cluster.events("blocked-vip")).anySatisfy(e -> {
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getReason()).isEqualTo("MigrationBlocked");
      });
    });
  }

  @Test
  void aServiceNamedLikeTheCloneButNotMadeForTheVirtualIpSurvivesMigrationAndDeletion() {
    cluster.groupOf("p3", List.of("198.51.100.16/28"), null, null);
    cluster.create(cluster.lb("app").editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null)
        .endSpec());
    // A user's Service that merely has the clone's name: no owner reference to the VirtualIP.
    cluster.create(cluster.lb("moving-keepalived-clone").editSpec().withType("ClusterIP")
        .withAllocateLoadBalancerNodePorts(null).endSpec());
    virtualIp("moving", "app", "198.51.100.20");
    ipObject("198.51.100.20", LegacyKinds.LABEL_GSM, "g1", ns + "/moving");
    // Deleted without migrating: its clone would go; this Service owned by another VirtualIP must not.
    GenericKubernetesResource other = virtualIp("other", "other-app", "198.51.100.21");
    cluster.create(cluster.lb("leaving-keepalived-clone").editMetadata().addNewOwnerReference()
        .withApiVersion("paas.org/v1").withKind("VirtualIP").withName("other").withUid(other.getMetadata().getUid())
        .endOwnerReference().endMetadata().editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null)
        .endSpec());
    virtualIp("leaving", "leaving-app", "198.51.100.22");

    operator = VipCluster.startOperator(server);
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName("moving").edit(v -> {
      v.getMetadata().setAnnotations(Map.of(LegacyKinds.MIGRATE_ANNOTATION, ""));
      return v;
    });
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName("leaving").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(status(virtualIp("moving"), "state")).isEqualTo("Migrated");
      assertThat(virtualIp("leaving")).isNull();
    });
    assertThat(cluster.service("moving-keepalived-clone")).as("not the VirtualIP's clone").isNotNull();
    assertThat(cluster.service("leaving-keepalived-clone")).as("another VirtualIP's clone").isNotNull();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.events("moving")).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getReason()).isEqualTo("CloneKept");
      assertThat(e.getMessage()).contains("moving-keepalived-clone");
    }));
    assertThat(cluster.ingress("app")).containsExactly("198.51.100.20");
  }
}
