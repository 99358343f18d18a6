package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServiceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.keepalived.config.ConfigCheckNode;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.ipamoperators.testsupport.kube.KubeApiServer;

/**
 * Nodes, groups and Services for the keepalived tests. Nodes are cluster-scoped, so they carry the test's
 * namespace in name and label and are deleted by {@link #close}. Every keepalived.conf the controller writes (a
 * watch sees every version of the groups' ConfigMaps) is kept in {@link #SEEN_CONFIGS} for the real
 * {@code keepalived --config-test} at the end of the class.
 */
final class KeepalivedCluster implements AutoCloseable {
  static final Set<String> SEEN_CONFIGS = Collections.synchronizedSet(new TreeSet<>());
  /** Router ids released at once, unless a test starts an operator with a grace of its own. */
  static final KeepalivedSettings SETTINGS = new KeepalivedSettings("test/keepalived:1", "test/ipam:1",
      Duration.ZERO);

  final KubernetesClient client;
  final String ns;
  private final List<String> nodes = new ArrayList<>();
  private final io.fabric8.kubernetes.client.informers.SharedIndexInformer<ConfigMap> configWatch;

  KeepalivedCluster(KubernetesClient client) {
    this.client = client;
    this.ns = client.getNamespace();
    configWatch = client.configMaps().withLabel(KeepalivedAnnotations.GROUP_LABEL).inform(
        new io.fabric8.kubernetes.client.informers.ResourceEventHandler<ConfigMap>() {
          @Override
          public void onAdd(ConfigMap cm) {
            record(cm);
          }

          @Override
          public void onUpdate(ConfigMap old, ConfigMap cm) {
            record(cm);
          }

          @Override
          public void onDelete(ConfigMap cm, boolean unknown) {
          }
        });
  }

  private static void record(ConfigMap cm) {
    if (cm.getData() != null) {
      SEEN_CONFIGS.addAll(cm.getData().values());
      WRITTEN.incrementAndGet();
    }
  }

  /** ConfigMap versions seen by the informers. */
  static final java.util.concurrent.atomic.AtomicInteger WRITTEN = new java.util.concurrent.atomic.AtomicInteger();

  static Operator startOperator(KubeApiServer server) {
    return startOperator(server, SETTINGS);
  }

  static Operator startOperator(KubeApiServer server, KeepalivedSettings settings) {
    KubernetesClient c = server.newClient();
    Operator op = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    KeepalivedControllers.register(op, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), settings);
    op.start();
    return op;
  }

  /** Every configuration the tests saw in a ConfigMap passes the real {@code keepalived --config-test}. */
  static void checkEverySeenConfiguration() {
    assertThat(SEEN_CONFIGS).isNotEmpty();
    try (ConfigCheckNode checker = new ConfigCheckNode()) {
      for (String config : SEEN_CONFIGS) {
        ConfigCheck check = checker.check(config);
        assertThat(check.valid()).as("keepalived --config-test (exit %d):%n%s%n%s", check.exitCode(), check.output(),
            config).isTrue();
      }
    }
    System.out.println("keepalived --config-test accepted all " + SEEN_CONFIGS.size()
        + " distinct configurations in the " + WRITTEN.get() + " ConfigMap versions the controller wrote");
  }

  void awaitEvent(String object, String reason, String text, Duration wait) {
    await().atMost(wait).untilAsserted(() -> assertThat(events(object)).anySatisfy(e -> {
      assertThat(e.getReason()).isEqualTo(reason);
      assertThat(e.getMessage()).contains(text);
    }));
  }

  /** The group's status service count, -1 while it has no status yet (so a wait retries). */
  int serviceCount(String group) {
    KeepalivedGroup g = group(group);
    return g == null || g.getStatus() == null || g.getStatus().serviceCount() == null ? -1
        : g.getStatus().serviceCount();
  }

  String nodeName(String name) {
    return ns + "-" + name;
  }

  /** A node of this test (label {@code test=<namespace>}) with host addresses. */
  Node node(String name, String... addresses) {
    String full = nodeName(name);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(full).withLabels(Map.of("test", ns))
        .endMetadata().build()).create();
    nodes.add(full);
    Node n = client.nodes().withName(full).get();
    NodeStatus status = new NodeStatus();
    for (String a : addresses) {
      status.getAddresses().add(new NodeAddressBuilder().withType("InternalIP").withAddress(a).build());
    }
    n.setStatus(status);
    return client.nodes().resource(n).updateStatus();
  }

  void deleteNode(String name) {
    client.nodes().withName(nodeName(name)).delete();
  }

  /** The test's nodes, interface eth0; change it with the builder's fields. */
  static SpecBuilder spec(String ns) {
    return new SpecBuilder(ns);
  }

  KeepalivedGroup group(String name, KeepalivedGroupSpec spec) {
    KeepalivedGroup g = new KeepalivedGroup();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    g.setMetadata(meta);
    g.setSpec(spec);
    return client.resource(g).create();
  }

  KeepalivedGroup group(String name) {
    return client.resources(KeepalivedGroup.class).withName(name).get();
  }

  void editGroup(String name, java.util.function.UnaryOperator<KeepalivedGroupSpec> edit) {
    client.resources(KeepalivedGroup.class).withName(name).edit(g -> {
      g.setSpec(edit.apply(g.getSpec()));
      return g;
    });
  }

  /** A Service pointing to {@code group} (of this namespace) with external IPs. */
  Service externalIps(String name, String group, String... ips) {
    return client.services().resource(base(name, group).editSpec().withType("ClusterIP").withExternalIPs(ips)
        .endSpec().build()).create();
  }

  /** A LoadBalancer Service pointing to {@code group}, its status showing {@code ingress}. */
  Service loadBalancer(String name, String group, List<String> ingress, String... externalIps) {
    client.services().resource(base(name, group).editSpec().withType("LoadBalancer")
        .withAllocateLoadBalancerNodePorts(false).withExternalIPs(externalIps).endSpec().build()).create();
    setIngress(name, ingress);
    return client.services().withName(name).get();
  }

  void setIngress(String name, List<String> ingress) {
    client.services().withName(name).editStatus(s -> {
      if (s.getStatus() == null) {
        s.setStatus(new ServiceStatus());
      }
      s.getStatus().setLoadBalancer(new LoadBalancerStatus(ingress.isEmpty() ? null
          : ingress.stream().map(ip -> new LoadBalancerIngressBuilder().withIp(ip).build()).toList()));
      return s;
    });
  }

  private ServiceBuilder base(String name, String group) {
    Map<String, String> annotations = new HashMap<>();
    if (group != null) {
      annotations.put(KeepalivedAnnotations.GROUP, group.contains("/") ? group : ns + "/" + group);
    }
    return new ServiceBuilder().withNewMetadata().withName(name).withAnnotations(annotations).endMetadata()
        .withNewSpec().withSelector(Map.of("app", name)).addNewPort().withPort(80).withProtocol("TCP").endPort()
        .endSpec();
  }

  void annotate(String service, String key, String value) {
    client.services().withName(service).edit(s -> {
      if (value == null) {
        s.getMetadata().getAnnotations().remove(key);
      } else {
        s.getMetadata().getAnnotations().put(key, value);
      }
      return s;
    });
  }

  /** The group's ConfigMap data (node name to keepalived.conf), remembered for the config check. */
  Map<String, String> configs(String group) {
    ConfigMap cm = client.configMaps().withName(group).get();
    if (cm == null || cm.getData() == null) {
      return Map.of();
    }
    SEEN_CONFIGS.addAll(cm.getData().values());
    return cm.getData();
  }

  String config(String group, String node) {
    return configs(group).getOrDefault(nodeName(node), "");
  }

  Map<String, Integer> routerIds(String group) {
    KeepalivedGroup g = group(group);
    return g == null || g.getStatus() == null || g.getStatus().routerIDs() == null ? Map.of()
        : g.getStatus().routerIDs();
  }

  String condition(String group, String type) {
    KeepalivedGroup g = group(group);
    if (g == null || g.getStatus() == null || g.getStatus().conditions() == null) {
      return null;
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).map(c -> c.getStatus())
        .findFirst().orElse(null);
  }

  List<Event> events(String object) {
    return client.v1().events().list().getItems().stream()
        .filter(e -> object.equals(e.getInvolvedObject().getName())).toList();
  }

  /** Every router-id claim (the groups' metrics ports are claims too, in a space of their own). */
  List<IDClaim> claims() {
    return client.resources(IDClaim.class).list().getItems().stream()
        .filter(c -> c.getSpec().space().startsWith("vrrp-")).toList();
  }

  /** The group's router-id claims (its metrics port claim is {@link #portClaimsOf}). */
  List<IDClaim> claimsOf(String group) {
    return allClaimsOf(group).stream().filter(c -> c.getSpec().space().startsWith("vrrp-")).toList();
  }

  List<IDClaim> portClaimsOf(String group) {
    return allClaimsOf(group).stream()
        .filter(c -> c.getSpec().space().equals(KeepalivedSettings.METRICS_PORT_SPACE)).toList();
  }

  /** Every claim the group holds, router ids and metrics port. */
  List<IDClaim> allClaimsOf(String group) {
    return client.resources(IDClaim.class).list().getItems().stream().filter(c -> group.equals(c.getSpec().owner().name())
        && ns.equals(c.getSpec().owner().namespace())).toList();
  }

  @Override
  public void close() {
    configWatch.stop();
    for (String n : nodes) {
      client.nodes().withName(n).delete();
    }
    for (KeepalivedGroup g : client.resources(KeepalivedGroup.class).list().getItems()) {
      client.resources(KeepalivedGroup.class).withName(g.getMetadata().getName()).edit(x -> {
        x.getMetadata().setFinalizers(List.of());
        return x;
      });
    }
    client.resources(KeepalivedGroup.class).delete();
    client.services().delete();
  }

  /** A group spec with the test's nodes and interface eth0 unless changed. */
  static final class SpecBuilder {
    String image;
    String iface = "eth0";
    String interfaceFromIp;
    Map<String, String> nodeSelector;
    org.ipamoperators.keepalived.api.PasswordAuth passwordAuth;
    Map<String, String> verbatim;
    List<Integer> blacklist;
    Boolean unicast;
    String advert;
    Integer sharedInstances;
    io.fabric8.kubernetes.api.model.LabelSelector namespaceSelector;
    String space;
    List<String> serviceNamespaces;
    List<String> vipCidrs;
    String priorityClassName;

    SpecBuilder(String ns) {
      nodeSelector = Map.of("test", ns);
    }

    KeepalivedGroupSpec build() {
      return new KeepalivedGroupSpec(image, iface, interfaceFromIp, nodeSelector, passwordAuth, verbatim, blacklist,
          unicast, priorityClassName, null, null, advert, null, null, null, null, sharedInstances, null, namespaceSelector, space,
          serviceNamespaces, vipCidrs);
    }
  }
}
