package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import java.util.concurrent.atomic.AtomicLong;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;

/** The pools and owners the reliability runs make: IPGroups, EgressIPAMs, KeepalivedGroups and their owners. */
final class ReliabilityFixtures {
  private static final AtomicLong NET_IDS = new AtomicLong(1000); // SDN's VNIDs: any distinct numbers do
  private ReliabilityFixtures() {}

  /** A vip {@code IPGroup} (cluster-scoped) over {@code segment}. */
  static void ipGroup(KubernetesClient client, String name, String segment) {
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("paas.org/v1");
    g.setKind("IPGroup");
    g.setMetadata(new ObjectMetaBuilder().withName(name).build());
    g.setAdditionalProperty("spec", Map.of("segment", segment));
    client.resource(g).create();
  }

  /** A LoadBalancer Service {@code name} in {@code ns}. */
  static void loadBalancer(KubernetesClient client, String ns, String name) {
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80)
        .withProtocol("TCP").endPort().endSpec().build()).create();
  }

  /** Node {@code node} labelled {@code zoneLabel=a} and an {@code EgressIPAM} {@code name} over {@code cidr} in it. */
  static void egressIpam(KubernetesClient client, String name, String cidr, String node, String zoneLabel) {
    Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node)
        .addToLabels(zoneLabel, "a").endMetadata().build()).create();
    created.setStatus(new NodeStatusBuilder().addNewCondition().withType("Ready").withStatus("True")
        .withReason("KubeletReady").withLastHeartbeatTime(Instant.now().toString())
        .withLastTransitionTime(Instant.now().toString()).endCondition().build());
    client.nodes().resource(created).updateStatus(); // Ready: it hosts the egress IPs
    if (client.supports(HostSubnet.class)) { // as OpenShift SDN makes it for a node: its egress IPs are watched too
      client.resources(HostSubnet.class).resource(new HostSubnetBuilder().withNewMetadata().withName(node)
          .endMetadata().withHost(node).withHostIP("203.0.113.250").withSubnet("10.128.250.0/23").build())
          .createOr(NonDeletingOperation::update);
    }
    EgressIPAM ipam = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    ipam.setMetadata(meta);
    ipam.setSpec(new EgressIPAMSpec(List.of(new CIDRAssignment(cidr, "a", null)), zoneLabel,
        new LabelSelectorBuilder().build(), null, null, null));
    client.resource(ipam).create();
  }

  /** A namespace labelled {@code burst=<burst>} that opts in to the EgressIPAM {@code ipam}. */
  static void optedInNamespace(KubernetesClient client, String name, String burst, String ipam) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).addToLabels("burst", burst)
        .addToAnnotations(EgressAnnotations.EGRESSIPAM, ipam).endMetadata().build()).create();
    if (client.supports(NetNamespace.class)) { // as OpenShift SDN makes it for a namespace
      client.resources(NetNamespace.class).resource(new NetNamespaceBuilder().withNewMetadata().withName(name)
          .endMetadata().withNetname(name).withNetid(NET_IDS.incrementAndGet()).build())
          .createOr(NonDeletingOperation::update);
    }
  }

  /** Deletes node {@code node} and, where the API serves them, its HostSubnet (as OpenShift SDN does). */
  static void deleteEgressNode(KubernetesClient client, String node) {
    client.nodes().withName(node).delete();
    if (client.supports(HostSubnet.class)) {
      client.resources(HostSubnet.class).withName(node).delete();
    }
  }

  /** Node {@code node} labelled {@code nodeLabel=ns} and KeepalivedGroups {@code groups} in {@code ns} selecting it. */
  static void keepalivedGroups(KubernetesClient client, String ns, String node, String nodeLabel,
      List<String> groups) {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).addToLabels(nodeLabel, ns)
        .endMetadata().build()).create();
    for (String name : groups) {
      KeepalivedGroup g = new KeepalivedGroup();
      ObjectMeta meta = new ObjectMeta();
      meta.setName(name);
      meta.setNamespace(ns);
      g.setMetadata(meta);
      g.setSpec(new KeepalivedGroupSpec(null, "eth0", null, Map.of(nodeLabel, ns), null, null, null, null,
          null, null, null, null, null, null, null, null, null, null, null, null));
      client.resource(g).create();
    }
  }

  /** A ClusterIP Service {@code name} in {@code ns} with external IP {@code ip}, in keepalived group {@code group}. */
  static void keepalivedService(KubernetesClient client, String ns, String name, String group, String ip) {
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .addToAnnotations(KeepalivedAnnotations.GROUP, ns + "/" + group).endMetadata()
        .withNewSpec().withType("ClusterIP").withExternalIPs(ip)
        .addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec().build()).create();
  }
}
