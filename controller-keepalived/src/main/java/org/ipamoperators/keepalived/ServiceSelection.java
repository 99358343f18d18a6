package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
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
 */
record ServiceSelection(Map<ServiceRef, Service> attached, List<ServiceVips> vips, Set<String> troubled,
    Set<String> keys, List<GroupReport.Note> notes) {

  ServiceSelection {
    attached = new TreeMap<>(attached);
    vips = List.copyOf(vips);
    troubled = new TreeSet<>(troubled);
    keys = new TreeSet<>(keys);
    notes = List.copyOf(notes);
  }

  /**
   * @param groupKey the group ({@code ns/name})
   * @param services the Services that name the group, are eligible and are not being deleted
   * @param namespaceAllowed whether the group's namespaceSelector lets a namespace attach VIPs to it
   */
  static ServiceSelection of(String groupKey, List<Service> services, Predicate<String> namespaceAllowed) {
    Map<ServiceRef, Service> attached = new TreeMap<>();
    List<ServiceVips> vips = new ArrayList<>();
    Set<String> troubled = new TreeSet<>();
    Set<String> keys = new TreeSet<>();
    List<GroupReport.Note> notes = new ArrayList<>();
    for (Service s : services) {
      String sk = AttachedService.key(s);
      if (!namespaceAllowed.test(s.getMetadata().getNamespace())) {
        notes.add(GroupReport.Note.warning(s, "NamespaceNotAllowed", "Namespace " + s.getMetadata().getNamespace()
            + " may not attach VIPs to KeepalivedGroup " + groupKey + " (its namespaceSelector does not match):"
            + " the VIPs are not announced"));
        troubled.add(sk);
        continue;
      }
      AttachedService a = AttachedService.read(s);
      for (String p : a.problems()) {
        notes.add(GroupReport.Note.warning(s, "InvalidServiceConfig", p));
        troubled.add(sk);
      }
      attached.put(a.vips().service(), s);
      vips.add(a.vips());
      keys.add(sk);
    }
    return new ServiceSelection(attached, vips, troubled, keys, notes);
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
    return new ServiceSelection(attached, decision.vips(), t, keys, n);
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
    return new ServiceSelection(attached, vips, t, keys, n);
  }
}
