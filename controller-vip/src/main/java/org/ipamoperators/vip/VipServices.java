package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import io.fabric8.kubernetes.api.model.ServicePort;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.plan.ShareMember;
import org.ipamoperators.vip.api.VipAnnotations;

/** What the controller reads from a Service. */
public final class VipServices {
  private VipServices() {}

  /**
   * A LoadBalancer Service of our class, or of none when {@code handleUnclassed} (see {@link VipSettings}): unclassed
   * Services are left to another load balancer implementation when it is off.
   */
  public static boolean handles(Service s, boolean handleUnclassed) {
    if (s.getSpec() == null || !"LoadBalancer".equals(s.getSpec().getType())) {
      return false;
    }
    String cls = s.getSpec().getLoadBalancerClass();
    return cls == null ? handleUnclassed : VipAnnotations.LOAD_BALANCER_CLASS.equals(cls);
  }

  public static boolean hasFinalizer(Service s) {
    return s.getMetadata().getFinalizers() != null && s.getMetadata().getFinalizers().contains(VipAnnotations.FINALIZER);
  }

  static Map<String, String> annotations(Service s) {
    return s.getMetadata().getAnnotations() == null ? Map.of() : s.getMetadata().getAnnotations();
  }

  /** The addresses asked for: our annotation, else spec.loadBalancerIP. */
  static List<String> requested(Service s) {
    String a = annotations(s).get(VipAnnotations.LOAD_BALANCER_IPS);
    if (a != null && !a.isBlank()) {
      return Arrays.stream(a.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
    }
    String lb = s.getSpec().getLoadBalancerIP();
    return lb == null || lb.isBlank() ? List.of() : List.of(lb.trim());
  }

  /** The families the Service must get: spec.ipFamilies (both for RequireDualStack). */
  static List<IpFamily> families(Service s) {
    List<IpFamily> out = new ArrayList<>();
    if (s.getSpec().getIpFamilies() != null) {
      for (String f : s.getSpec().getIpFamilies()) {
        IpFamily family = "IPv6".equals(f) ? IpFamily.IPV6 : IpFamily.IPV4;
        if (!out.contains(family)) {
          out.add(family);
        }
      }
    }
    if (out.isEmpty()) {
      out.add(IpFamily.IPV4);
    }
    if ("RequireDualStack".equals(s.getSpec().getIpFamilyPolicy())) {
      for (IpFamily f : IpFamily.values()) {
        if (!out.contains(f)) {
          out.add(f);
        }
      }
    }
    return out;
  }

  /**
   * The families the Service would like besides: with PreferDualStack, the other family, given
   * when a pool that may serve it has that family (even when the cluster's Service network is
   * single-stack, since the load balancer address does not depend on it).
   */
  static List<IpFamily> optionalFamilies(Service s) {
    if (!"PreferDualStack".equals(s.getSpec().getIpFamilyPolicy())) {
      return List.of();
    }
    List<IpFamily> must = families(s);
    return Arrays.stream(IpFamily.values()).filter(f -> !must.contains(f)).toList();
  }

  /** The sharing key: ours, else MetalLB's (current, then legacy); null when none. */
  static String sharingKey(Service s) {
    Map<String, String> a = annotations(s);
    for (String k : List.of(VipAnnotations.SHARING_KEY, VipAnnotations.METALLB_SHARING_KEY,
        VipAnnotations.METALLB_LEGACY_SHARING_KEY)) {
      String v = a.get(k);
      if (v != null && !v.isBlank()) {
        return v.trim();
      }
    }
    return null;
  }

  /** The Service as a sharing member: its protocol/port pairs and, for Local traffic policy, its selector. */
  static ShareMember member(Service s) {
    List<String> ports = new ArrayList<>();
    if (s.getSpec().getPorts() != null) {
      for (ServicePort p : s.getSpec().getPorts()) {
        String entry = (p.getProtocol() == null ? "TCP" : p.getProtocol()) + "/" + p.getPort();
        if (!ports.contains(entry)) {
          ports.add(entry);
        }
      }
    }
    ports.sort(null);
    String backend = "";
    if ("Local".equals(s.getSpec().getExternalTrafficPolicy())) {
      Map<String, String> sel = s.getSpec().getSelector() == null ? Map.of() : new TreeMap<>(s.getSpec().getSelector());
      backend = sel.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
    }
    return new ShareMember(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(), s.getMetadata().getUid(),
        ports, backend);
  }

  public static List<String> ingress(Service s) {
    if (s.getStatus() == null || s.getStatus().getLoadBalancer() == null
        || s.getStatus().getLoadBalancer().getIngress() == null) {
      return List.of();
    }
    return s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp)
        .filter(x -> x != null).toList();
  }
}
