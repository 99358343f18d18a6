package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * Who may use node mode: {@code EIP_NODE_MODE_NAMESPACES} (the namespaces whose Eips may select nodes) and
 * {@code EIP_NODE_MODE_NODE_SELECTOR} (the nodes they may select), on the real apiserver and moto.
 */
class NodeModeLimitsIT extends EipIT {
  private String suffix() {
    return Integer.toString(Math.abs(world.ns.hashCode()));
  }

  private Map<String, String> role() {
    return Map.of("role", "egress-" + suffix());
  }

  private Map<String, String> onlyOtherNamespaces() {
    return Map.of("EIP_NODE_MODE_NAMESPACES", "egress-gw-" + suffix());
  }

  @Test
  void aNodeEipOfANamespaceThatMayNotUseNodeModeGetsNoAddressAndSaysWhy() {
    world.node("n1", world.instance(), role(), true);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto, world.settings(onlyOtherNamespaces()));

    await().atMost(WAIT).untilAsserted(() -> {
      var ready = world.condition("gw", "Ready");
      assertThat(ready.getStatus()).isEqualTo("False");
      assertThat(ready.getReason()).isEqualTo("NodeModeNotAllowed");
      assertThat(ready.getMessage()).contains("namespace " + world.ns + " may not use node mode",
          "egress-gw-" + suffix(), "no address is allocated");
    });
    assertThat(world.events("Eip", "gw")).anyMatch(e -> e.startsWith("NodeModeNotAllowed: "));
    // Two more passes: still nothing allocated, associated or labelled.
    long describes = world.count("DescribeAddresses");
    await().atMost(WAIT).until(() -> world.count("DescribeAddresses") >= describes + 2);
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(world.count("AssociateAddress")).isZero();
    assertThat(world.addresses()).isEmpty();
    assertThat(world.nodeLabel("n1", EipNames.READY_STATUS_LABEL)).isNull();
    assertThat(world.eip("gw").getStatus().allocationId()).isNull();
    assertThat(world.events("Eip", "gw")).filteredOn(e -> e.startsWith("NodeModeNotAllowed: ")).hasSize(1);
  }

  /** The limit set after the fact: the address made before stays where it is, reported; deletion releases it. */
  @Test
  void anAssociationMadeBeforeTheLimitStaysReportedAndIsReleasedWithTheEip() {
    EipWorld.Host h1 = world.instance();
    world.node("n1", h1, role(), true);
    world.eip("gw", EipSelector.node(role()));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("gw", "Ready").getStatus()));
    Address before = world.addresses().get(0);

    world.stopOperators();
    world.start(server, moto, world.settings(onlyOtherNamespaces()));
    await().atMost(WAIT).untilAsserted(() -> {
      var ready = world.condition("gw", "Ready");
      assertThat(ready.getReason()).isEqualTo("NodeModeNotAllowed");
      assertThat(ready.getMessage()).contains(before.publicIp() + ", associated before, stays on node "
          + world.nodeName("n1"));
    });
    long describes = world.count("DescribeAddresses");
    await().atMost(WAIT).until(() -> world.count("DescribeAddresses") >= describes + 2);
    Address during = world.addresses().get(0);
    assertThat(during.associationId()).isEqualTo(before.associationId());
    assertThat(during.privateIpAddress()).isEqualTo(h1.privateIp());
    assertThat(world.count("DisassociateAddress")).isZero();
    Eip gw = world.eip("gw");
    assertThat(gw.getStatus().associationId()).isEqualTo(before.associationId());
    assertThat(gw.getStatus().resourceId()).isEqualTo(world.nodeName("n1"));
    assertThat(gw.getStatus().allocationId()).isEqualTo(before.allocationId());

    world.kube.resources(Eip.class).withName("gw").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.addresses()).isEmpty();
      assertThat(world.eip("gw")).isNull();
    });
  }

  @Test
  void nodesOutsideTheBoundAreNeverChosenAndAnEipMatchingOnlySuchNodesSaysSo() {
    String bound = "edge-" + suffix();
    EipWorld.Host h2 = world.instance();
    world.node("n1", world.instance(), Map.of("role", role().get("role"), "pick", "one-" + suffix()), true);
    world.node("n2", h2, Map.of("role", role().get("role"), "tier", bound), true);
    world.eip("gw", EipSelector.node(role()));
    world.eip("one", EipSelector.node(Map.of("pick", "one-" + suffix())));
    world.start(server, moto, world.settings(Map.of("EIP_NODE_MODE_NODE_SELECTOR", "tier=" + bound)));

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.condition("gw", "Ready").getStatus()).isEqualTo("True");
      var one = world.condition("one", "Ready");
      assertThat(one.getReason()).isEqualTo("NodeOutsideBound");
      assertThat(one.getMessage()).contains("all outside the nodes node-mode Eips may select", "tier=" + bound);
    });
    // n1 is first by name and matches gw: the bound alone sends gw to n2.
    assertThat(world.eip("gw").getStatus().resourceId()).isEqualTo(world.nodeName("n2"));
    Address gw = world.addresses().stream().filter(a -> a.associationId() != null).findFirst().orElseThrow();
    assertThat(gw.privateIpAddress()).isEqualTo(h2.privateIp());
    assertThat(world.count("AssociateAddress")).isEqualTo(1);
    assertThat(world.nodeLabel("n1", EipNames.READY_STATUS_LABEL)).isEqualTo("false");
  }
}
