package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/**
 * The EC2 and Kubernetes side of the eip fault runs: EC2 instances in a VPC of the test's own (in the shared moto)
 * as Nodes, and pods whose IPs are the primary addresses of extra ENIs on those instances (moto records an
 * association's private address as its ENI's primary one), set through the status subresource (no kubelet). And
 * the checks over what EC2 holds, scoped to one cluster tag and namespace: the apiserver and moto are shared by the
 * test classes of a run.
 */
final class EipFaultWorld {
  private final KubernetesClient client;
  private final Ec2Client ec2;
  private final String ns;
  private final String cluster;
  private final String podSubnet;
  private final String hostSubnet;
  private final List<String> nodes = new ArrayList<>();
  /** A node's {@link #NODE_LABEL} value to its InternalIP (its instance's primary address): where a node Eip goes. */
  private final Map<String, String> nodeIps = new HashMap<>();
  /** A node's {@link #NODE_LABEL} value to its name. */
  private final Map<String, String> nodeNames = new HashMap<>();
  /** Each node of the world carries this label, {@code <cluster>-<prefix>}: a node-mode Eip selects one by it. */
  static final String NODE_LABEL = "eip-fault-node";
  private int nextPodIp = 10;
  private int nextHostIp = 10;

  /** {@code octet}: the VPC is 10.{octet}.0.0/16, apart from other tests' VPCs in the same moto. */
  EipFaultWorld(KubernetesClient client, Ec2Client ec2, String cluster, int octet) {
    this.client = client;
    this.ec2 = ec2;
    this.ns = client.getNamespace();
    this.cluster = cluster;
    String vpc = ec2.createVpc(r -> r.cidrBlock("10." + octet + ".0.0/16")).vpc().vpcId();
    hostSubnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10." + octet + ".1.0/24")
        .availabilityZone("us-east-1a")).subnet().subnetId();
    podSubnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10." + octet + ".2.0/24")
        .availabilityZone("us-east-1a")).subnet().subnetId();
    if (client.serviceAccounts().withName("default").get() == null) {
      client.serviceAccounts().resource(new ServiceAccountBuilder().withNewMetadata().withName("default")
          .endMetadata().build()).create();
    }
  }

  /**
   * A Node on a new instance with {@code pods} pods on ENIs of their own; returns pod name to pod IP. The node is
   * labelled {@link #NODE_LABEL}={@link #nodeLabel}, for node-mode Eips.
   */
  Map<String, String> nodeWithPods(String prefix, int pods) {
    String prefixIp = hostSubnetPrefix();
    String hostIp = prefixIp + (nextHostIp++);
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(hostSubnet)
        .privateIpAddress(hostIp).minCount(1).maxCount(1)).instances().get(0);
    String node = ns + "-" + prefix;
    var n = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node)
        .withLabels(Map.of(EipNames.MANAGE_LABEL, "true", NODE_LABEL, nodeLabel(prefix))).endMetadata()
        .withNewSpec().withProviderID("aws:///us-east-1a/" + i.instanceId()).endSpec().build()).create();
    nodes.add(node);
    nodeIps.put(nodeLabel(prefix), hostIp);
    nodeNames.put(nodeLabel(prefix), node);
    n.setStatus(new NodeStatusBuilder().addNewAddress().withType("InternalIP").withAddress(hostIp).endAddress()
        .withConditions(new NodeConditionBuilder().withType("Ready").withStatus("True").withReason("KubeletReady")
            .withLastTransitionTime(Instant.now().toString()).withLastHeartbeatTime(Instant.now().toString())
            .build()).build());
    client.nodes().resource(n).updateStatus();
    Map<String, String> names = new java.util.LinkedHashMap<>();
    for (int k = 0; k < pods; k++) {
      String ip = podSubnetPrefix() + (nextPodIp++);
      NetworkInterface eni = ec2.createNetworkInterface(r -> r.subnetId(podSubnet).privateIpAddress(ip))
          .networkInterface();
      int device = k + 1;
      ec2.attachNetworkInterface(r -> r.networkInterfaceId(eni.networkInterfaceId()).instanceId(i.instanceId())
          .deviceIndex(device));
      String name = prefix + "-pod-" + k;
      var p = client.pods().resource(new PodBuilder().withNewMetadata().withName(name)
          .withLabels(Map.of(EipNames.MANAGE_LABEL, "true")).endMetadata()
          .withNewSpec().withNodeName(node).withAutomountServiceAccountToken(false)
          .addNewContainer().withName("c").withImage("registry.invalid/app:1").endContainer().endSpec().build())
          .create();
      p.setStatus(new PodStatusBuilder().withPhase("Running").withPodIP(ip).withPodIPs(new PodIP(ip)).build());
      client.pods().resource(p).updateStatus();
      names.put(name, ip);
    }
    return names;
  }

  /** The {@link #NODE_LABEL} value of the node made by {@code nodeWithPods(prefix, ...)}. */
  String nodeLabel(String prefix) {
    return cluster + "-" + prefix;
  }

  private String hostSubnetPrefix() {
    return ec2.describeSubnets(r -> r.subnetIds(hostSubnet)).subnets().get(0).cidrBlock().replace("0/24", "");
  }

  private String podSubnetPrefix() {
    return ec2.describeSubnets(r -> r.subnetIds(podSubnet)).subnets().get(0).cidrBlock().replace("0/24", "");
  }

  /** The addresses of this test's Eips: by cluster and namespace tag. */
  List<Address> addresses() {
    return ec2.describeAddresses(r -> r.filters(
        Filter.builder().name("tag:" + EipNames.TAG_CLUSTER).values(cluster).build(),
        Filter.builder().name("tag:" + EipNames.TAG_NAMESPACE).values(ns).build())).addresses();
  }

  static Map<String, String> tags(Address a) {
    Map<String, String> t = new TreeMap<>();
    a.tags().forEach(x -> t.put(x.key(), x.value()));
    return t;
  }

  /**
   * What is wrong between the Eips and EC2 now (empty when nothing): an Eip without exactly one address tagged with
   * its UID, or whose status names another; an address shown by two Eips; an address whose UID is no live Eip's (a
   * leak); two addresses on one private IP; an Eip whose pod exists ({@code associated}) but whose address is not
   * associated with the pod's IP; a node-mode Eip selecting one of this world's nodes whose address is not associated
   * with that node's InternalIP, or whose status names another node.
   */
  List<String> problems(Map<String, String> podIps) {
    List<String> out = new ArrayList<>();
    List<Eip> eips = client.resources(Eip.class).list().getItems();
    List<Address> addresses = addresses();
    Map<String, List<Address>> byUid = new HashMap<>();
    for (Address a : addresses) {
      byUid.computeIfAbsent(tags(a).getOrDefault(EipNames.TAG_UID, ""), k -> new ArrayList<>()).add(a);
    }
    Map<String, String> shownBy = new HashMap<>();
    for (Eip e : eips) {
      String name = e.getMetadata().getName();
      List<Address> tagged = byUid.remove(e.getMetadata().getUid());
      String allocation = e.getStatus() == null ? null : e.getStatus().allocationId();
      if (tagged == null || tagged.size() != 1) {
        out.add("Eip " + name + ": " + (tagged == null ? 0 : tagged.size()) + " addresses tagged with its UID");
        continue;
      }
      Address a = tagged.get(0);
      if (!a.allocationId().equals(allocation)) {
        out.add("Eip " + name + ": status " + allocation + ", EC2 " + a.allocationId());
      }
      String other = shownBy.put(a.allocationId(), name);
      if (other != null) {
        out.add(a.allocationId() + " shown by " + other + " and " + name);
      }
      String pod = podOf(e);
      String podIp = pod == null ? null : podIps.get(pod);
      if (podIp != null && !podIp.equals(a.privateIpAddress())) {
        out.add("Eip " + name + ": " + a.publicIp() + " on " + a.privateIpAddress() + ", its pod " + pod + " has "
            + podIp);
      }
      String label = nodeOf(e);
      String nodeIp = label == null ? null : nodeIps.get(label);
      if (nodeIp != null) {
        String node = nodeNames.get(label);
        if (!nodeIp.equals(a.privateIpAddress())) {
          out.add("Eip " + name + ": " + a.publicIp() + " on " + a.privateIpAddress() + ", its node " + node
              + " has " + nodeIp);
        }
        String resource = e.getStatus() == null ? null : e.getStatus().resourceId();
        if (!node.equals(resource)) {
          out.add("Eip " + name + ": status names node " + resource + ", not " + node);
        }
        podIp = nodeIp; // and its association must be the one EC2 shows, as for a pod
      }
      String association = e.getStatus() == null ? null : e.getStatus().associationId();
      if (podIp != null && (association == null || !association.equals(a.associationId()))) {
        out.add("Eip " + name + ": status association " + association + ", EC2 " + a.associationId());
      }
    }
    byUid.forEach((uid, left) -> left.forEach(a -> out.add("leak: " + a.publicIp() + " (" + a.allocationId()
        + ") tags " + tags(a))));
    Map<String, String> onIp = new HashMap<>();
    for (Address a : addresses) {
      if (a.privateIpAddress() != null) {
        String other = onIp.put(a.privateIpAddress(), a.allocationId());
        if (other != null) {
          out.add(a.privateIpAddress() + " holds " + other + " and " + a.allocationId());
        }
      }
    }
    return out;
  }

  /** The pod a pod-mode Eip selects. */
  static String podOf(Eip e) {
    var s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.pod() == null ? null : s.pod().podName();
  }

  /** The node a node-mode Eip selects by {@link #NODE_LABEL}, or null. */
  static String nodeOf(Eip e) {
    var s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.node() == null || s.node().selector() == null ? null : s.node().selector().get(NODE_LABEL);
  }

  /** Removes this test's Nodes (cluster-scoped; pods and Eips stay in the test's namespace). */
  void deleteNodes() {
    for (String n : nodes) {
      client.nodes().withName(n).delete();
    }
  }

  /** The address each Eip shows, keyed by name and UID: an Eip deleted and made again under its name is another owner. */
  static Map<String, List<String>> shown(KubernetesClient client) {
    Map<String, List<String>> out = new HashMap<>();
    for (Eip e : client.resources(Eip.class).list().getItems()) {
      if (e.getStatus() != null && e.getStatus().publicIpAddress() != null) {
        out.put(e.getMetadata().getName() + "/" + e.getMetadata().getUid(), List.of(e.getStatus().publicIpAddress()));
      }
    }
    return out;
  }
}
