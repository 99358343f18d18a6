package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * Node mode: scenarios 12 to 17. The Eips live in the test's namespace (never {@code default}) with
 * {@code NAMESPACE} unset, which is scenario 17.
 */
class NodeModeIT extends EipIT {
  static final Map<String, String> EGRESS = Map.of("role", "egress");

  private Map<String, String> role() {
    return Map.of("role", "egress-" + world.ns.hashCode());
  }

  @Test
  void oneOfTwoReadyNodesHoldsTheAddressAndFailoverMovesItInAwsWhenItsHolderGoesNotReady() {
    EipWorld.Host h1 = world.instance();
    EipWorld.Host h2 = world.instance();
    world.node("n1", h1, role(), true);
    world.node("n2", h2, role(), true);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto);

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.condition("gw", "Ready").getStatus()).isEqualTo("True");
      assertThat(world.nodeLabel("n1", EipNames.READY_STATUS_LABEL)).isEqualTo("true");
      assertThat(world.nodeLabel("n2", EipNames.READY_STATUS_LABEL)).isEqualTo("false");
    });
    Address a = world.addresses().get(0);
    assertThat(a.privateIpAddress()).isEqualTo(h1.privateIp());
    assertThat(world.eip("gw").getStatus().resourceId()).isEqualTo(world.nodeName("n1"));

    long started = System.nanoTime();
    world.setReady("n1", false);
    await().atMost(WAIT).untilAsserted(() -> {
      Address moved = world.addresses().get(0);
      assertThat(moved.privateIpAddress()).isEqualTo(h2.privateIp());
      assertThat(moved.publicIp()).isEqualTo(a.publicIp());
      assertThat(world.eip("gw").getStatus().resourceId()).isEqualTo(world.nodeName("n2"));
      assertThat(world.eip("gw").getStatus().associationId()).isEqualTo(moved.associationId());
      assertThat(world.nodeLabel("n1", EipNames.READY_STATUS_LABEL)).isEqualTo("false");
      assertThat(world.nodeLabel("n2", EipNames.READY_STATUS_LABEL)).isEqualTo("true");
    });
    System.out.printf("failover in %d ms (grace 1 s)%n", Duration.ofNanos(System.nanoTime() - started).toMillis());
    assertThat(world.addresses()).hasSize(1);

    // n1 back: the address stays on n2 (no move without need).
    world.setReady("n1", true);
    long describes = world.count("DescribeAddresses");
    await().atMost(WAIT).until(() -> world.count("DescribeAddresses") >= describes + 2);
    assertThat(world.addresses().get(0).privateIpAddress()).isEqualTo(h2.privateIp());
  }

  /** After a control-plane outage every node is Unknown since long ago: the gateway's address must stay. */
  @Test
  void whenEveryMatchingNodeIsUnknownPastTheGraceTheAddressStaysOnItsHolderAndSaysWhy() {
    EipWorld.Host h1 = world.instance();
    EipWorld.Host h2 = world.instance();
    world.node("n1", h1, role(), true);
    world.node("n2", h2, role(), true);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("gw", "Ready").getStatus()));
    Address before = world.addresses().get(0);
    assertThat(before.privateIpAddress()).isEqualTo(h1.privateIp());

    Instant outage = Instant.now().minus(Duration.ofHours(1));
    world.setReadyCondition("n1", "Unknown", outage);
    world.setReadyCondition("n2", "Unknown", outage);
    await().atMost(WAIT).untilAsserted(() -> {
      var ready = world.condition("gw", "Ready");
      assertThat(ready.getReason()).isEqualTo("HolderNotReady");
      assertThat(ready.getStatus()).isEqualTo("False");
      assertThat(ready.getMessage()).contains("stays associated", world.nodeName("n1"), "failed",
          "none of the 2 matching nodes is Ready");
    });
    // Past the grace (1 s) and two more passes (3 s resync): still there, never disassociated.
    long describes = world.count("DescribeAddresses");
    await().atMost(WAIT).until(() -> world.count("DescribeAddresses") >= describes + 2);
    Address during = world.addresses().get(0);
    assertThat(during.associationId()).isEqualTo(before.associationId());
    assertThat(during.privateIpAddress()).isEqualTo(h1.privateIp());
    assertThat(world.count("DisassociateAddress")).isZero();
    assertThat(world.eip("gw").getStatus().resourceId()).isEqualTo(world.nodeName("n1"));
    assertThat(world.eip("gw").getStatus().associationId()).isEqualTo(before.associationId());
    assertThat(world.nodeLabel("n1", EipNames.READY_STATUS_LABEL)).isEqualTo("true");
    assertThat(world.events("Eip", "gw")).anyMatch(e -> e.startsWith("HolderNotReady: "));

    // The control plane back: the holder is Ready again and keeps the address, no call moves it.
    world.setReady("n1", true);
    world.setReady("n2", true);
    await().atMost(WAIT).until(() -> "Associated".equals(world.condition("gw", "Ready").getReason()));
    assertThat(world.addresses().get(0).associationId()).isEqualTo(before.associationId());
    assertThat(world.count("AssociateAddress")).isEqualTo(1);
  }

  @Test
  void aDeletedHolderLosesTheAddressToAnotherReadyNode() {
    EipWorld.Host h1 = world.instance();
    EipWorld.Host h2 = world.instance();
    world.node("n1", h1, role(), true);
    world.start(server, moto);
    world.eip("gw", EipSelector.node(role()));
    await().atMost(WAIT).until(() -> "True".equals(world.condition("gw", "Ready").getStatus()));
    world.node("n2", h2, role(), true);
    world.kube.nodes().withName(world.nodeName("n1")).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.addresses().get(0).privateIpAddress()).isEqualTo(h2.privateIp());
      assertThat(world.eip("gw").getStatus().resourceId()).isEqualTo(world.nodeName("n2"));
    });
  }

  @Test
  void eipsStartedTogetherEndOnDistinctNodesWithOneAssociationEach() {
    int n = 3;
    for (int i = 0; i < n; i++) {
      world.node("n" + i, world.instance(), role(), true);
    }
    world.start(server, moto);
    for (int i = 0; i < n; i++) {
      world.eip("gw" + i, EipSelector.node(role()));
    }
    await().atMost(WAIT).untilAsserted(() -> {
      List<Address> all = world.addresses();
      assertThat(all).hasSize(n);
      assertThat(all).allMatch(a -> a.associationId() != null);
      Set<String> ips = new HashSet<>();
      all.forEach(a -> ips.add(a.privateIpAddress()));
      assertThat(ips).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(world.condition("gw" + i, "Ready").getStatus()).isEqualTo("True");
      }
    });
    // Exactly one association per Eip, not a fight: n AssociateAddress calls in all.
    assertThat(world.count("AssociateAddress")).isEqualTo(n);
    assertThat(world.allEvents()).noneMatch(e -> "Warning".equals(e.getType()));
  }

  @Test
  void aManagedNodeNoEipSelectsIsIgnoredQuietly() {
    world.node("idle", world.instance(), Map.of("role", "web"), true);
    world.node("n1", world.instance(), role(), true);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("gw", "Ready").getStatus()));
    assertThat(world.nodeLabel("idle", EipNames.READY_STATUS_LABEL)).isNull();
    assertThat(world.events("Node", world.nodeName("idle"))).isEmpty();
  }

  @Test
  void anEmptyNodeSelectorIsRefusedAtAdmission() {
    assertThatThrownBy(() -> world.eip("all", EipSelector.node(Map.of())))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("an empty node selector would match every node");
        });
    assertThatThrownBy(() -> world.eip("both", new EipSelector(new org.ipamoperators.eip.api.PodTarget("p"),
        new org.ipamoperators.eip.api.NodeTarget(EGRESS))))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    assertThat(world.kube.resources(Eip.class).list().getItems()).isEmpty();
  }

  @Test
  void noReadyMatchingNodeLeavesTheAddressAllocatedAndSaysWhy() {
    world.node("n1", world.instance(), role(), false);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.condition("gw", "Ready").getReason()).isEqualTo("NoEligibleNode");
      assertThat(world.condition("gw", "Ready").getMessage()).contains("is Ready");
    });
    assertThat(world.addresses()).hasSize(1);
    assertThat(world.count("AssociateAddress")).isZero();
  }
}
