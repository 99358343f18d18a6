package org.ipamoperators.cli.plan;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.VipFacts;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.VipPlan;
import org.ipamoperators.vip.plan.VipProblem;

/**
 * {@code ipam plan} over cluster objects for controller-vip: every LoadBalancer Service it serves,
 * planned by the controller's own planner from the objects read as the controller reads them
 * ({@link VipFacts}). Services are planned one after another (by namespace and name), and what
 * each one claims is recorded before the next is planned, as the controller's claims are; which
 * new Service gets which free address may differ when the controller serves many at once.
 */
final class VipObjectsPlan {
  private VipObjectsPlan() {}

  /**
   * One Service's plan; {@code ingress} is what its status shows once the controller is done (the
   * plan's addresses, or what it shows today when a blocking problem keeps it waiting).
   */
  record Planned(String service, VipPlan plan, List<String> ingress) {
    boolean clean() {
      return plan.problems().isEmpty();
    }
  }

  /** Whether the controller serves the Service, unclassed ones as {@code IPAM_VIP_HANDLE_UNCLASSED} says. */
  private static boolean served(Service s) {
    return org.ipamoperators.vip.VipServices.handles(s, org.ipamoperators.vip.VipSettings.handleUnclassed(
        System.getenv(org.ipamoperators.vip.VipSettings.HANDLE_UNCLASSED)));
  }

  /** Whether the objects give controller-vip anything to plan. */
  static boolean applies(ClusterObjects objects) {
    return !objects.ipGroups().isEmpty() || objects.services().stream().anyMatch(VipObjectsPlan::served);
  }

  static List<Planned> plan(ClusterObjects objects) {
    ClaimIndex index = VipFacts.newIndex();
    for (IPClaim c : objects.claims()) {
      index.seen(c);
    }
    List<GroupInfo> groups = VipFacts.groups(objects.ipGroups());
    Map<String, Namespace> namespaces = objects.namespaces().stream()
        .collect(Collectors.toMap(n -> n.getMetadata().getName(), Function.identity(), (a, b) -> b));
    List<Service> services = objects.services().stream().filter(VipObjectsPlan::served)
        .filter(s -> s.getMetadata().getDeletionTimestamp() == null)
        .sorted(Comparator.comparing((Service s) -> s.getMetadata().getNamespace())
            .thenComparing(s -> s.getMetadata().getName()))
        .toList();
    List<Planned> out = new ArrayList<>();
    for (Service svc : services) {
      ClaimOwner owner = VipFacts.owner(svc);
      ServiceRequest req = VipFacts.request(svc, groups, namespaces::get);
      VipPlan plan = VipFacts.plan(index, req, owner, groups, Map.of()).plan();
      VipFacts.assumeClaimed(index, req, owner, plan);
      List<String> ingress = plan.complete() ? plan.ingress().stream().map(Ip::toString).toList() : req.current();
      out.add(new Planned(req.key(), plan, ingress));
    }
    return out;
  }

  private static List<String> addresses(List<Holding> holdings) {
    return holdings.stream().map(h -> h.ip().toString()).toList();
  }

  static List<Object> json(List<Planned> planned) {
    List<Object> out = new ArrayList<>();
    for (Planned p : planned) {
      Map<String, Object> m = new LinkedHashMap<>();
      int slash = p.service().indexOf('/');
      m.put("namespace", p.service().substring(0, slash));
      m.put("name", p.service().substring(slash + 1));
      m.put("ingress", p.ingress());
      m.put("kept", addresses(p.plan().keep()));
      m.put("new", addresses(p.plan().toClaim()));
      m.put("release", addresses(p.plan().toRelease()));
      m.put("problems", p.plan().problems().stream().map(x -> {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("reason", x.reason().name());
        q.put("blocking", x.blocking());
        q.put("message", x.message());
        return q;
      }).toList());
      out.add(m);
    }
    return out;
  }

  static String text(List<Planned> planned) {
    StringBuilder sb = new StringBuilder("LoadBalancer Services (as controller-vip plans them, in namespace/name order)\n");
    if (planned.isEmpty()) {
      sb.append("  none served\n");
    }
    int width = planned.stream().mapToInt(p -> p.service().length()).max().orElse(0);
    for (Planned p : planned) {
      sb.append("  ").append(p.service()).append(" ".repeat(width - p.service().length() + 2));
      List<String> parts = new ArrayList<>();
      p.plan().keep().forEach(h -> parts.add(h.ip() + " (kept)"));
      p.plan().toClaim().forEach(h -> parts.add(h.ip() + " (new)"));
      if (!p.plan().complete()) {
        sb.append("pending");
        if (!p.ingress().isEmpty()) {
          sb.append(", shows ").append(String.join(", ", p.ingress()));
        }
      } else {
        sb.append(parts.isEmpty() ? "no address" : String.join(", ", parts));
      }
      sb.append('\n');
      if (!p.plan().toRelease().isEmpty()) {
        sb.append("      released: ").append(String.join(", ", addresses(p.plan().toRelease()))).append('\n');
      }
      for (VipProblem x : p.plan().problems()) {
        sb.append("      ").append(x.reason()).append(": ").append(x.message()).append('\n');
      }
    }
    long problems = planned.stream().filter(p -> !p.clean()).count();
    sb.append("  problems: ").append(problems == 0 ? "none" : problems + " Service" + (problems == 1 ? "" : "s"))
        .append('\n');
    return sb.toString();
  }
}
