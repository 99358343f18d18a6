package org.ipamoperators.testsupport.netns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.testsupport.netns.DocumentationAddresses.ipv4;
import static org.ipamoperators.testsupport.netns.DocumentationAddresses.ipv4Cidr;
import static org.ipamoperators.testsupport.netns.DocumentationAddresses.ipv6;
import static org.ipamoperators.testsupport.netns.DocumentationAddresses.ipv6Cidr;

import java.util.List;
import org.ipamoperators.testsupport.CommandResult;
import org.junit.jupiter.api.Test;

/** Network namespaces joined by veth pairs and bridges; traffic stays inside them. */
@NetnsTest
class NetworkLabIT {

  @Test
  void twoNamespacesJoinedByVethPingEachOtherOverIpv4AndIpv6(NetworkLab lab) {
    NetworkNamespace a = lab.namespace("a");
    NetworkNamespace b = lab.namespace("b");
    lab.veth(a, "eth0", b, "eth0");
    a.addAddress("eth0", ipv4Cidr(1)).addAddress("eth0", ipv6Cidr(1));
    b.addAddress("eth0", ipv4Cidr(2)).addAddress("eth0", ipv6Cidr(2));

    assertPings(a, ipv4(2));
    assertPings(b, ipv4(1));
    assertPings(a, ipv6(2));
    assertPings(b, ipv6(1));
    assertThat(a.ping("198.51.100.1", 1).succeeded()).as("no route leaves the lab").isFalse();
  }

  @Test
  void aBridgeJoinsSeveralNamespacesOnOneSegment(NetworkLab lab) {
    NetworkLab.Bridge bridge = lab.bridge("hub");
    NetworkNamespace[] nodes = new NetworkNamespace[3];
    for (int i = 0; i < nodes.length; i++) {
      nodes[i] = lab.namespace("node" + i);
      lab.attach(bridge, nodes[i], "eth0");
      nodes[i].addAddress("eth0", ipv4Cidr(10 + i));
    }

    assertPings(nodes[0], ipv4(12));
    assertPings(nodes[2], ipv4(11));
    assertThat(bridge.namespace().ip("link", "show", "master", NetworkLab.Bridge.NAME).stdout())
        .contains("p1", "p2", "p3");
  }

  @Test
  void closeDeletesEveryNamespaceOfTheLab() {
    List<String> names;
    try (NetworkLab lab = NetworkLab.create()) {
      NetworkNamespace a = lab.namespace("a");
      NetworkNamespace b = lab.namespace("b");
      lab.veth(a, "eth0", b, "eth0");
      names = List.of(a.name(), b.name());
      assertThat(NetworkLab.existingNamespaces()).containsAll(names);
    }

    assertThat(NetworkLab.existingNamespaces()).doesNotContainAnyElementsOf(names);
  }

  private static void assertPings(NetworkNamespace from, String address) {
    CommandResult ping = from.ping(address, 2);
    assertThat(ping.succeeded()).as("ping %s from %s:%n%s%naddresses:%n%s", address, from, ping, from.addresses())
        .isTrue();
  }
}
