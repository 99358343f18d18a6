package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.VipSettings;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** IPGroup admission, defaults and status; LoadBalancer classes. */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class IPGroupIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private VipCluster cluster;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  /** The condition, or an empty one while there is none (so that a wait retries instead of failing). */
  private static Condition condition(IPGroup g, String type) {
    if (g == null || g.getStatus() == null || g.getStatus().conditions() == null) {
      return new Condition();
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).findFirst()
        .orElseGet(Condition::new);
  }

  @Test
  void admissionRejectsAMalformedSegmentAndAGroupWithoutAddresses() {
    assertThatThrownBy(() -> cluster.group("bad", "1.1.1.0/33", List.of()))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    assertThatThrownBy(() -> cluster.group("empty", new IPGroupSpec(null, List.of(), null, null, null, null, null, null)))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("give a segment or at least one entry in cidrs");
        });
    assertThatThrownBy(() -> cluster.group("strategy", new IPGroupSpec("192.0.2.0/24", null, null, null, null, null,
        null, "LOWEST"))).isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
  }

  @Test
  void admissionRefusesZeroPaddedAndShortAddresses() {
    // A lenient reader takes 010 as octal 8: 192.168.010.0/24 would become 192.168.8.0/24.
    for (IPGroupSpec spec : List.of(
        new IPGroupSpec("192.168.010.0/24", null, null, null, null, null, null, null),
        new IPGroupSpec("192.168.1/24", null, null, null, null, null, null, null),
        new IPGroupSpec("192.0.2.0/24", List.of("192.0.2.07"), null, null, null, null, null, null),
        new IPGroupSpec(null, null, List.of("3232235777"), null, null, null, null, null),
        new IPGroupSpec(null, null, List.of("192.0.2.1-192.0.2.010"), null, null, null, null, null))) {
      assertThatThrownBy(() -> cluster.group("padded", spec)).as(spec.toString())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    }
    assertThat(cluster.group("padded")).isNull();
    assertThat(cluster.group("unpadded", new IPGroupSpec("192.168.10.0/24", List.of("192.168.10.7"),
        List.of("2001:db8::/120", "198.51.100.10 - 198.51.100.20"), null, null, null, null, null))).isNotNull();
  }

  @Test
  void theOldOperatorsObjectIsAcceptedAndAutoAssignDefaultsToTrue() {
    IPGroup g = cluster.group("legacy", "1.1.1.0/29", List.of("1.1.1.0", "1.1.1.2", "1.1.1.7"));
    assertThat(g.getSpec().autoAssign()).isTrue();
    await().atMost(WAIT).untilAsserted(() -> {
      IPGroup s = cluster.group("legacy");
      assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
      assertThat(s.getStatus().free()).isEqualTo("5"); // .1 .3 .4 .5 .6
    });
  }

  @Test
  void anInvalidGroupIsNotReadyAndOverlappingGroupsAreReported() {
    cluster.group("hostbits", "10.0.0.5/24", List.of());
    cluster.groupOf("a", List.of("192.0.2.0/24"), null, null);
    cluster.groupOf("b", List.of("192.0.2.128/25", "2001:db8::/64"), null, null);
    cluster.groupOf("c", List.of("198.51.100.0/24"), null, null);
    await().atMost(WAIT).untilAsserted(() -> {
      Condition ready = condition(cluster.group("hostbits"), "Ready");
      assertThat(ready.getStatus()).isEqualTo("False");
      assertThat(ready.getReason()).isEqualTo("InvalidSpec");
      assertThat(ready.getMessage()).contains("10.0.0.0/24");
      assertThat(condition(cluster.group("a"), "Overlapping").getMessage()).isNotNull();
      assertThat(condition(cluster.group("a"), "Overlapping").getStatus()).isEqualTo("True");
      assertThat(condition(cluster.group("a"), "Overlapping").getMessage()).contains("IPGroup(s) b");
      assertThat(condition(cluster.group("b"), "Overlapping").getMessage()).contains("IPGroup(s) a");
      // created after a (or in the same second: by name), so b is the one refused
      assertThat(condition(cluster.group("b"), "Ready").getReason()).isEqualTo("OverlapsOlderGroup");
      assertThat(condition(cluster.group("a"), "Ready").getStatus()).isEqualTo("True");
      assertThat(condition(cluster.group("c"), "Overlapping").getStatus()).isEqualTo("False");
    });
  }

  @Test
  void aGroupOfOnlyAddressesNeverPublishedIsRefusedWithAConditionAndAnEvent() {
    cluster.group("loopback", "127.0.0.0/8", List.of());
    cluster.groupOf("metadata", List.of("169.254.169.254", "fe80::/10"), null, null);
    cluster.groupOf("partly", List.of("126.255.255.254-127.0.0.1"), null, null);
    await().atMost(WAIT).untilAsserted(() -> {
      Condition ready = condition(cluster.group("loopback"), "Ready");
      assertThat(ready.getStatus()).isEqualTo("False");
      assertThat(ready.getReason()).isEqualTo("InvalidSpec");
      assertThat(ready.getMessage()).contains("127.0.0.0/8").contains("only addresses").contains("loopback");
      Condition metadata = condition(cluster.group("metadata"), "Ready");
      assertThat(metadata.getReason()).isEqualTo("InvalidSpec");
      assertThat(metadata.getMessage()).contains("169.254.169.254").contains("fe80::/10");
      // a range with some ordinary addresses is valid: it hands out those only
      IPGroup partly = cluster.group("partly");
      assertThat(condition(partly, "Ready").getStatus()).isEqualTo("True");
      assertThat(partly.getStatus().free()).isEqualTo("2");
    });
    // a cluster-scoped object's Events are in namespace default
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.client.v1().events().inNamespace("default")
        .withField("involvedObject.name", "loopback").list().getItems()).anySatisfy(e -> {
          assertThat(e.getType()).isEqualTo("Warning");
          assertThat(e.getReason()).isEqualTo("InvalidSpec");
          assertThat(e.getMessage()).contains("127.0.0.0/8");
        }));
  }

  @Test
  void anAddressAnotherControllerHoldsIsReportedAndNeverHandedOut() {
    // An egress IP claimed by controller-egressip inside the group's range, before the group exists.
    new ClusterLedger(cluster.client).claim(Ip.parse("203.0.113.1"), "egressipam/zones",
        new ClaimOwner("egressip", "Namespace", null, "payments", "uid-payments"));
    try {
      cluster.groupOf("shared", List.of("203.0.113.0/30"), null, null);
      await().atMost(WAIT).untilAsserted(() -> {
        Condition c = condition(cluster.group("shared"), "ClaimedElsewhere");
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getMessage()).contains("203.0.113.1 (egressipam/zones");
      });
      cluster.create(cluster.lb("web").editMetadata().addToLabels("x", "y").endMetadata());
      await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("web")).containsExactly("203.0.113.2"));
    } finally {
      new ClusterLedger(cluster.client).release(Ip.parse("203.0.113.1"),
          new ClaimOwner("egressip", "Namespace", null, "payments", "uid-payments"));
    }
    await().atMost(WAIT).untilAsserted(() ->
        assertThat(condition(cluster.group("shared"), "ClaimedElsewhere").getStatus()).isEqualTo("False"));
  }

  @Test
  void servicesOfAnotherLoadBalancerClassAreLeftAloneAndOursAreServed() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("foreign").editSpec().withLoadBalancerClass("other.io/lb").endSpec());
    cluster.create(cluster.lb("ours").editSpec().withLoadBalancerClass(VipAnnotations.LOAD_BALANCER_CLASS).endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("ours")).containsExactly("192.0.2.1"));
    assertThat(cluster.ingress("foreign")).isEmpty();
    assertThat(cluster.service("foreign").getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(cluster.claims()).hasSize(1);
  }

  @Test
  void unclassedServicesCanBeLeftToAnotherLoadBalancer(KubeApiServer server) {
    operator.stop();
    operator = VipCluster.startOperator(server, new VipSettings(false, VipSettings.DEFAULT_SWEEP_INTERVAL));
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("unclassed"));
    cluster.create(cluster.lb("ours").editSpec().withLoadBalancerClass(VipAnnotations.LOAD_BALANCER_CLASS).endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("ours")).containsExactly("192.0.2.1"));
    assertThat(cluster.ingress("unclassed")).isEmpty();
    assertThat(cluster.service("unclassed").getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(cluster.claims()).hasSize(1);
  }
}
