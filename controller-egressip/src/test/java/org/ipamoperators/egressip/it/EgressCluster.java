package org.ipamoperators.egressip.it;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;

/**
 * Plays the parts of a cluster that a test apiserver lacks: nodes with a Ready condition, OpenShift
 * SDN's HostSubnets and NetNamespaces. Names carry a per-test prefix; {@link #close} deletes what
 * the test made (namespaces only get a deletion mark: no controller finishes them here).
 */
final class EgressCluster implements AutoCloseable {
  final KubernetesClient client;
  final String prefix;
  private final boolean sdn;
  private final List<String> nodes = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();
  private int hostIp = 10;

  EgressCluster(KubernetesClient client, String prefix, boolean sdn) {
    this.client = client;
    this.prefix = prefix;
    this.sdn = sdn;
  }

  String n(String name) {
    return prefix + "-" + name;
  }

  /** A worker with labels, Ready, and (SDN) its HostSubnet with a host address. */
  Node node(String name, Map<String, String> labels) {
    String full = n(name);
    Map<String, String> l = new HashMap<>(labels);
    l.put("node-role.kubernetes.io/worker", "");
    String host = "203.0.113." + (hostIp++);
    Node node = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(full).withLabels(l)
        .endMetadata().build()).create();
    nodes.add(full);
    setReady(name, true);
    if (sdn) {
      client.resources(HostSubnet.class).resource(new HostSubnetBuilder().withNewMetadata().withName(full)
          .endMetadata().withHost(full).withHostIP(host).withSubnet("10.128." + hostIp + ".0/23").build()).create();
    }
    return node;
  }

  /** A worker on a cloud: {@code spec.providerID} and its InternalIP as the kubelet would set them. */
  Node cloudNode(String name, Map<String, String> labels, String providerId, String internalIp) {
    node(name, labels);
    client.nodes().withName(n(name)).edit(x -> {
      if (x.getSpec() == null) {
        x.setSpec(new io.fabric8.kubernetes.api.model.NodeSpec());
      }
      x.getSpec().setProviderID(providerId);
      return x;
    });
    Node node = client.nodes().withName(n(name)).get();
    node.getStatus().setAddresses(List.of(new io.fabric8.kubernetes.api.model.NodeAddress(internalIp, "InternalIP")));
    return client.nodes().resource(node).updateStatus();
  }

  void setReady(String name, boolean ready) {
    Node node = client.nodes().withName(n(name)).get();
    NodeCondition c = new NodeConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False")
        .withReason(ready ? "KubeletReady" : "NodeStatusUnknown")
        .withLastTransitionTime(Instant.now().toString()).withLastHeartbeatTime(Instant.now().toString()).build();
    if (node.getStatus() == null) {
      node.setStatus(new io.fabric8.kubernetes.api.model.NodeStatus());
    }
    node.getStatus().setConditions(List.of(c));
    client.nodes().resource(node).updateStatus();
  }

  void label(String node, String key, String value) {
    client.nodes().withName(n(node)).edit(x -> {
      if (value == null) {
        x.getMetadata().getLabels().remove(key);
      } else {
        x.getMetadata().getLabels().put(key, value);
      }
      return x;
    });
  }

  void deleteNode(String name) {
    client.nodes().withName(n(name)).delete();
    if (sdn) {
      client.resources(HostSubnet.class).withName(n(name)).delete();
    }
  }

  /** A namespace opted in to an IPAM (and, on SDN, its NetNamespace as SDN would create it). */
  Namespace namespace(String name, String ipam, String egressIps) {
    String full = n(name);
    Map<String, String> a = new HashMap<>();
    if (ipam != null) {
      a.put(EgressAnnotations.EGRESSIPAM, ipam);
    }
    if (egressIps != null) {
      a.put(EgressAnnotations.EGRESSIPS, egressIps);
    }
    Namespace ns = client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(full)
        .withAnnotations(a).endMetadata().build()).create();
    namespaces.add(full);
    if (sdn) {
      client.resources(NetNamespace.class).resource(new NetNamespaceBuilder().withNewMetadata().withName(full)
          .endMetadata().withNetname(full).withNetid((long) (1000 + namespaces.size())).build()).create();
    }
    return ns;
  }

  void annotate(String ns, String key, String value) {
    client.namespaces().withName(n(ns)).edit(x -> {
      if (value == null) {
        x.getMetadata().getAnnotations().remove(key);
      } else {
        x.getMetadata().getAnnotations().put(key, value);
      }
      return x;
    });
  }

  String egressIps(String ns) {
    Namespace x = client.namespaces().withName(n(ns)).get();
    return x == null || x.getMetadata().getAnnotations() == null ? null
        : x.getMetadata().getAnnotations().get(EgressAnnotations.EGRESSIPS);
  }

  List<String> netNamespaceIps(String ns) {
    NetNamespace x = client.resources(NetNamespace.class).withName(n(ns)).get();
    return x == null || x.getEgressIPs() == null ? List.of() : x.getEgressIPs();
  }

  Set<String> hostSubnetIps(String node) {
    HostSubnet x = client.resources(HostSubnet.class).withName(n(node)).get();
    return x == null || x.getEgressIPs() == null ? Set.of() : new TreeSet<>(x.getEgressIPs());
  }

  List<String> hostSubnetCidrs(String node) {
    HostSubnet x = client.resources(HostSubnet.class).withName(n(node)).get();
    return x == null || x.getEgressCIDRs() == null ? List.of() : x.getEgressCIDRs();
  }

  /** Every egress IP on any HostSubnet of this test, with the node hosting it. */
  Map<String, List<String>> hostedAnywhere() {
    Map<String, List<String>> out = new HashMap<>();
    for (String node : nodes) {
      HostSubnet x = client.resources(HostSubnet.class).withName(node).get();
      if (x != null && x.getEgressIPs() != null) {
        x.getEgressIPs().forEach(ip -> out.computeIfAbsent(ip, k -> new ArrayList<>()).add(node));
      }
    }
    return out;
  }

  EgressIPAM ipam(String name, String topologyLabel, Map<String, String> nodeSelector, Integer capacity,
      Integer graceSeconds, CIDRAssignment... cidrs) {
    EgressIPAM ipam = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    ipam.setMetadata(meta);
    ipam.setSpec(new EgressIPAMSpec(Arrays.asList(cidrs), topologyLabel,
        nodeSelector == null ? null : new LabelSelectorBuilder().withMatchLabels(nodeSelector).build(),
        null, capacity, graceSeconds));
    return client.resource(ipam).create();
  }

  /** A short, valid, per-test name prefix from the test method's name. */
  /**
   * Removes OpenShift SDN's CRDs, which another test class of this JVM may have installed, and waits until their
   * group is gone: the cluster is then OVN-Kubernetes to the controller.
   */
  static void withoutOpenShiftSdn(org.ipamoperators.testsupport.kube.KubeApiServer server) {
    try (KubernetesClient c = server.newClient()) {
      for (String crd : java.util.List.of("hostsubnets.network.openshift.io", "netnamespaces.network.openshift.io")) {
        c.apiextensions().v1().customResourceDefinitions().withName(crd).delete();
      }
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> c.getApiGroups()
          .getGroups().stream().noneMatch(g -> g.getName().equals("network.openshift.io")));
    }
  }

  static String prefix(org.junit.jupiter.api.TestInfo info) {
    String p = info.getTestMethod().orElseThrow().getName().replaceAll("[A-Z]", "").toLowerCase();
    return (p.length() > 12 ? p.substring(0, 12) : p) + Integer.toHexString(info.getDisplayName().hashCode() & 0xfff);
  }

  /** The status of one condition of an EgressIPAM, or null when it has none yet. */
  static String condition(EgressIPAM ipam, String type) {
    if (ipam == null || ipam.getStatus() == null || ipam.getStatus().conditions() == null) {
      return null;
    }
    return ipam.getStatus().conditions().stream().filter(c -> type.equals(c.getType()))
        .map(io.fabric8.kubernetes.api.model.Condition::getStatus).findFirst().orElse(null);
  }

  static CIDRAssignment cidr(String cidr, String labelValue, String... reserved) {
    return new CIDRAssignment(cidr, labelValue, reserved.length == 0 ? null : List.of(reserved));
  }

  @Override
  public void close() {
    for (String node : nodes) {
      client.nodes().withName(node).delete();
      if (sdn) {
        client.resources(HostSubnet.class).withName(node).delete();
      }
    }
    for (String ns : namespaces) {
      if (sdn) {
        client.resources(NetNamespace.class).withName(ns).delete();
      }
      client.namespaces().withName(ns).delete();
    }
  }
}
