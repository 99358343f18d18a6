package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;

/**
 * What the cluster shows, owner to resources, for a {@link SnapshotCheck}: only owners that show something. Each
 * reads only the test's own objects (the apiserver is shared by every test class of the JVM).
 */
final class Shown {
  private Shown() {}

  /** Service name ({@code keyPrefix} before it) to its {@code status.loadBalancer.ingress} IPs, in {@code ns}. */
  static Map<String, List<String>> loadBalancerIps(KubernetesClient client, String ns, String keyPrefix) {
    Map<String, List<String>> out = new HashMap<>();
    for (Service s : client.services().inNamespace(ns).list().getItems()) {
      if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null
          && !s.getStatus().getLoadBalancer().getIngress().isEmpty()) {
        out.put(keyPrefix + s.getMetadata().getName(), s.getStatus().getLoadBalancer().getIngress().stream()
            .map(LoadBalancerIngress::getIp).toList());
      }
    }
    return out;
  }

  /** Namespace name ({@code keyPrefix} before it) to its egress IPs annotation, namespaces labelled label=value. */
  static Map<String, List<String>> egressIps(KubernetesClient client, String label, String value, String keyPrefix) {
    Map<String, List<String>> out = new HashMap<>();
    for (Namespace n : client.namespaces().withLabel(label, value).list().getItems()) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
      if (ips != null && !ips.isBlank()) {
        out.put(keyPrefix + n.getMetadata().getName(), List.of(ips.split(",")));
      }
    }
    return out;
  }

  /** {@code group/instance} to {@code router-id N}, as the groups' status in {@code ns} shows them. */
  static Map<String, List<String>> routerIds(KubernetesClient client, String ns, List<String> groups) {
    Map<String, List<String>> out = new HashMap<>();
    for (String name : groups) {
      KeepalivedGroup g = client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).get();
      if (g != null && g.getStatus() != null && g.getStatus().routerIDs() != null) {
        g.getStatus().routerIDs().forEach((vip, id) ->
            out.computeIfAbsent(name + "/" + vip, k -> new ArrayList<>()).add("router-id " + id));
      }
    }
    return out;
  }
}
