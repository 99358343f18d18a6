package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.config.Problem;
import org.ipamoperators.keepalived.config.ServiceRef;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.keepalived.config.VipHandover;

/**
 * The Services a group announces (pure): their VIPs, the keys of the Services not (fully) announced and the Events
 * that say why. Each step returns a new selection; the Events keep the order in which the steps found them.
 *
 * @param attached the Services taken, by reference
 * @param vips what the planner gets for them
 * @param troubled keys ({@code ns/name}) of the Services not (fully) announced
 * @param keys keys of the Services taken
 * @param notes the Events to record, on the Services (and the group)
 * @param refused keys of the Services the group's {@link AttachRules} or namespaceSelector refused, wholly or some of
 *     their VIPs (a subset of {@code troubled})
 */
record ServiceSelection(Map<ServiceRef, Service> attached, List<ServiceVips> vips, Set<String> troubled,
    Set<String> keys, List<GroupReport.Note> notes, Set<String> refused) {
  static final String REASON_NAMESPACE = "NamespaceNotAllowed";
  static final String REASON_VIP = "VIPNotAllowed";

  ServiceSelection {
    attached = new TreeMap<>(attached);
    vips = List.copyOf(vips);
    troubled = new TreeSet<>(troubled);
    keys = new TreeSet<>(keys);
    notes = List.copyOf(notes);
    refused = new TreeSet<>(refused);
  }

  /** Every namespace, every address; only the namespaceSelector decides. */
  static ServiceSelection of(String groupKey, List<Service> services, Predicate<String> namespaceAllowed) {
    return of(groupKey, services, namespaceAllowed, AttachRules.ANY);
  }

  /**
   * @param groupKey the group ({@code ns/name})
   * @param services the Services that name the group, are eligible and are not being deleted
   * @param namespaceAllowed whether the group's namespaceSelector lets a namespace attach VIPs to it
   * @param rules the group's {@code serviceNamespaces} and {@code vipCIDRs} (or the operator's defaults)
   */
  static ServiceSelection of(String groupKey, List<Service> services, Predicate<String> namespaceAllowed,
      AttachRules rules) {
    Map<ServiceRef, Service> attached = new TreeMap<>();
    List<ServiceVips> vips = new ArrayList<>();
    Set<String> troubled = new TreeSet<>();
    Set<String> keys = new TreeSet<>();
    List<GroupReport.Note> notes = new ArrayList<>();
    Set<String> refused = new TreeSet<>();
    for (Service s : services) {
      String sk = AttachedService.key(s);
      Optional<String> notAllowed = namespaceRefusal(groupKey, s.getMetadata().getNamespace(), namespaceAllowed,
          rules);
      if (notAllowed.isPresent()) {
        notes.add(GroupReport.Note.warning(s, REASON_NAMESPACE, notAllowed.get()));
        troubled.add(sk);
        refused.add(sk);
        continue;
      }
      AttachedService a = AttachedService.read(s);
      for (String p : a.problems()) {
        notes.add(GroupReport.Note.warning(s, "InvalidServiceConfig", p));
        troubled.add(sk);
      }
      Optional<ServiceVips> allowed = withinRules(groupKey, s, a.vips(), rules, notes);
      if (allowed.isEmpty() || !allowed.get().equals(a.vips())) {
        troubled.add(sk);
        refused.add(sk);
      }
      if (allowed.isEmpty()) {
        continue; // nothing of it may be announced: not attached, like a Service of a namespace not allowed
      }
      attached.put(a.vips().service(), s);
      vips.add(allowed.get());
      keys.add(sk);
    }
    return new ServiceSelection(attached, vips, troubled, keys, notes, refused);
  }

  /**
   * The Service's VIPs the group may announce, empty when it had some and none may be; a Warning Event in
   * {@code notes} for those left out.
   */
  private static Optional<ServiceVips> withinRules(String groupKey, Service s, ServiceVips asked, AttachRules rules,
      List<GroupReport.Note> notes) {
    SortedSet<Ip> outside = asked.vips().stream().filter(ip -> !rules.announces(ip))
        .collect(Collectors.toCollection(TreeSet::new));
    if (outside.isEmpty()) {
      return Optional.of(asked);
    }
    notes.add(GroupReport.Note.warning(s, REASON_VIP, outside.stream().map(Ip::toString)
        .collect(Collectors.joining(", ")) + (outside.size() == 1 ? " is" : " are") + " outside the addresses"
        + " KeepalivedGroup " + groupKey + " may announce (vipCIDRs: " + rules.cidrsText() + "): not announced"));
    SortedSet<Ip> kept = new TreeSet<>(asked.vips());
    kept.removeAll(outside);
    return kept.isEmpty() ? Optional.empty() : Optional.of(new ServiceVips(asked.service(), kept, asked.spread(),
        asked.verbatim(), asked.healthCheckPort()));
  }

  /** Why Services of {@code namespace} may not attach to the group, if they may not. */
  private static Optional<String> namespaceRefusal(String groupKey, String namespace,
      Predicate<String> namespaceAllowed, AttachRules rules) {
    if (!rules.namespaceAllowed(namespace)) {
      return Optional.of("Services of namespace " + namespace + " may not attach VIPs to KeepalivedGroup " + groupKey
          + " (serviceNamespaces: " + rules.namespacesText() + "): the VIPs are not announced");
    }
    if (!namespaceAllowed.test(namespace)) {
      return Optional.of("Namespace " + namespace + " may not attach VIPs to KeepalivedGroup " + groupKey
          + " (its namespaceSelector does not match): the VIPs are not announced");
    }
    return Optional.empty();
  }

  /**
   * Only the VIPs {@link VipHandover} lets the group render now; each VIP that waits for another group to let go
   * of it is a Warning Event on its Service, which counts as not fully announced.
   */
  ServiceSelection handedOver(VipHandover.Decision decision) {
    Set<String> t = new TreeSet<>(troubled);
    List<GroupReport.Note> n = new ArrayList<>(notes);
    for (VipHandover.Deferred w : decision.deferred()) {
      n.add(GroupReport.Note.warning(attached.get(w.service()), "VIPHeldByAnotherGroup", w.vip()
          + " is still announced by KeepalivedGroup " + w.heldBy() + ": it is announced here once that group's"
          + " configuration no longer carries it"));
      t.add(w.service().key());
    }
    return new ServiceSelection(attached, decision.vips(), t, keys, n, refused);
  }

  /**
   * Every problem of the plan goes to the Services concerned: a Service without a VIP yet gets a Normal Event, any
   * other problem a Warning and counts as not (fully) announced.
   */
  ServiceSelection withProblems(List<Problem> problems) {
    Set<String> t = new TreeSet<>(troubled);
    List<GroupReport.Note> n = new ArrayList<>(notes);
    for (Problem p : problems) {
      for (ServiceRef ref : p.services()) {
        Service s = attached.get(ref);
        if (s == null) {
          continue;
        }
        if (p.kind() == Problem.Kind.NO_VIP) {
          n.add(GroupReport.Note.normal(s, "NoVIPYet", p.message()));
        } else {
          n.add(GroupReport.Note.warning(s, GroupReport.reason(p.kind()), p.message()));
          t.add(ref.key());
        }
      }
    }
    return new ServiceSelection(attached, vips, t, keys, n, refused);
  }
}
