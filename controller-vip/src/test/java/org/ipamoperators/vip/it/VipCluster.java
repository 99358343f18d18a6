package org.ipamoperators.vip.it;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.vip.VipControllers;
import org.ipamoperators.vip.VipSettings;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;

/**
 * Services and IPGroups for the VIP tests, in the test's namespace. {@link #close} removes the
 * Services (finalizers stripped: the operator is stopped by then), so no test leaves cluster IPs
 * of the test apiserver's small Service range in use.
 */
final class VipCluster implements AutoCloseable {
  final KubernetesClient client;

  VipCluster(KubernetesClient client) {
    this.client = client;
  }

  static Operator startOperator(KubeApiServer server) {
    return startOperator(server, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
  }

  static Operator startOperator(KubeApiServer server, io.micrometer.core.instrument.MeterRegistry registry) {
    KubernetesClient c = server.newClient();
    Operator op = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    VipControllers.register(op, c, registry);
    op.start();
    return op;
  }

  static Operator startOperator(KubeApiServer server, VipSettings settings) {
    KubernetesClient c = server.newClient();
    Operator op = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    VipControllers.register(op, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), settings);
    op.start();
    return op;
  }

  IPGroup group(String name, String segment, List<String> excluded) {
    return group(name, new IPGroupSpec(segment, excluded, null, null, null, null, null, null));
  }

  IPGroup groupOf(String name, List<String> cidrs, Integer priority, Map<String, String> serviceSelector) {
    return group(name, new IPGroupSpec(null, null, cidrs, null,
        serviceSelector == null ? null : new LabelSelectorBuilder().withMatchLabels(serviceSelector).build(), null,
        priority, null));
  }

  IPGroup group(String name, IPGroupSpec spec) {
    IPGroup g = new IPGroup();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    g.setMetadata(meta);
    g.setSpec(spec);
    return client.resource(g).create();
  }

  IPGroup group(String name) {
    return client.resources(IPGroup.class).withName(name).get();
  }

  ServiceBuilder lb(String name) {
    return new ServiceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
        .withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false).withSelector(Map.of("app", name))
        .addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec();
  }

  Service create(ServiceBuilder b) {
    return client.services().resource(b.build()).create();
  }

  List<Service> services() {
    return client.services().list().getItems();
  }

  Service service(String name) {
    return client.services().withName(name).get();
  }

  List<String> ingress(String name) {
    Service s = service(name);
    if (s == null || s.getStatus() == null || s.getStatus().getLoadBalancer() == null
        || s.getStatus().getLoadBalancer().getIngress() == null) {
      return List.of();
    }
    return s.getStatus().getLoadBalancer().getIngress().stream().map(i -> i.getIp()).toList();
  }

  /** Our condition on the Service: "True/Reason" or "False/Reason", null when absent. */
  io.fabric8.kubernetes.api.model.Condition condition(String service) {
    Service s = service(service);
    if (s == null || s.getStatus() == null || s.getStatus().getConditions() == null) {
      return null;
    }
    return s.getStatus().getConditions().stream()
        .filter(c -> org.ipamoperators.vip.api.VipAnnotations.CONDITION.equals(c.getType())).findFirst().orElse(null);
  }

  void annotate(String service, String key, String value) {
    client.services().withName(service).edit(s -> {
      if (s.getMetadata().getAnnotations() == null) {
        s.getMetadata().setAnnotations(new java.util.HashMap<>());
      }
      if (value == null) {
        s.getMetadata().getAnnotations().remove(key);
      } else {
        s.getMetadata().getAnnotations().put(key, value);
      }
      return s;
    });
  }

  List<Event> events(String service) {
    return client.v1().events().list().getItems().stream()
        .filter(e -> service.equals(e.getInvolvedObject().getName())).toList();
  }

  List<IPClaim> claims() {
    return client.resources(IPClaim.class).list().getItems();
  }

  IPClaim claim(String ip) {
    return new ClusterLedger(client).get(Ip.parse(ip)).orElse(null);
  }

  void delete(String name) {
    client.services().withName(name).delete();
  }

  @Override
  public void close() {
    List<Service> all = new ArrayList<>(client.services().list().getItems());
    for (Service s : all) {
      if (s.getMetadata().getFinalizers() != null && !s.getMetadata().getFinalizers().isEmpty()) {
        try {
          client.services().withName(s.getMetadata().getName()).edit(x -> {
            x.getMetadata().setFinalizers(List.of());
            return x;
          });
        } catch (RuntimeException e) {
          // gone meanwhile
        }
      }
    }
    client.services().delete();
  }
}
