package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupStatus;
import org.ipamoperators.keepalived.config.Problem;

/**
 * What a group says about itself (pure): its conditions and status, the wording of its Events, and when it is
 * looked at again.
 */
final class GroupReport {
  static final String COND_READY = "Ready";
  static final String COND_EXHAUSTED = "RouterIDsExhausted";
  static final String COND_SERVICE_PROBLEMS = "ServiceProblems";
  /** How soon a group with instances that have no router id looks for a free one again. */
  static final Duration RETRY_EXHAUSTED = Duration.ofSeconds(60);
  private static final int LISTED_IN_MESSAGES = 10;

  /** An Event to record on {@code on}: a Warning, or a Normal one. */
  record Note(HasMetadata on, boolean warning, String reason, String message) {
    static Note warning(HasMetadata on, String reason, String message) {
      return new Note(on, true, reason, message);
    }

    static Note normal(HasMetadata on, String reason, String message) {
      return new Note(on, false, reason, message);
    }
  }

  private GroupReport() {}

  /** The status of a condition of the group ("True", "False"), or null when it has none of that type. */
  static String condition(KeepalivedGroup g, String type) {
    if (g.getStatus() == null || g.getStatus().conditions() == null) {
      return null;
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).map(Condition::getStatus)
        .findFirst().orElse(null);
  }

  /** The status of a group whose running configuration is left as it is: not Ready, for {@code reason}. */
  static KeepalivedGroupStatus keptRunning(KeepalivedGroup group, String reason, String message) {
    KeepalivedGroupStatus old = group.getStatus();
    Long generation = group.getMetadata().getGeneration();
    List<Condition> c = Conditions.set(old == null ? null : old.conditions(), COND_READY, false, reason, message,
        generation);
    return old == null
        ? new KeepalivedGroupStatus(Map.of(), c, generation, List.of(), 0, 0, 0, null, null, null)
        : new KeepalivedGroupStatus(old.routerIDs() == null ? Map.of() : old.routerIDs(), c, generation,
            old.services() == null ? List.of() : old.services(), old.serviceCount(), old.instanceCount(),
            old.nodeCount(), old.routerIDSpace(), old.refusedServices(), old.refusedServiceCount());
  }

  /** The status of a group whose configuration is written: its three conditions, router ids and counts. */
  static KeepalivedGroupStatus reconciled(KeepalivedGroup group, GroupPlan plan, Integer metricsPort,
      boolean podMonitor, int routerIdsPerNamespace) {
    Long generation = group.getMetadata().getGeneration();
    List<Condition> conditions = group.getStatus() == null ? null : group.getStatus().conditions();
    conditions = Conditions.set(conditions, COND_READY, true, "Reconciled", plan.services().attached().size()
        + " services, " + plan.instances() + " VRRP instances, " + plan.nodes().size() + " nodes"
        + (metricsPort != null ? ", metrics on port " + metricsPort : ", no metrics port free")
        + (podMonitor ? ", PodMonitor" : ""), generation);
    RouterIds.Result ids = plan.ids();
    conditions = Conditions.set(conditions, COND_EXHAUSTED, !ids.exhausted().isEmpty(),
        ids.exhausted().isEmpty() ? "RouterIDsAvailable"
            : ids.quotaReached() ? "NamespaceQuotaReached" : "NoFreeRouterID",
        ids.exhausted().isEmpty() ? "every instance has a router id" : ids.exhausted().size()
            + " instances have no router id in space " + plan.space() + (ids.quotaReached()
                ? " (the groups of namespace " + group.getMetadata().getNamespace() + " hold the "
                    + routerIdsPerNamespace + " ids the operator allows a namespace): "
                : " (its ids are taken or blacklisted): ") + first(ids.exhausted()), generation);
    Set<String> troubled = plan.services().troubled();
    conditions = Conditions.set(conditions, COND_SERVICE_PROBLEMS, !troubled.isEmpty(),
        troubled.isEmpty() ? "AllAnnounced" : "ServicesNotAnnounced",
        troubled.isEmpty() ? "every attached service is announced" : troubled.size()
            + " services are not (fully) announced, see their Events: " + first(troubled)
            + (plan.services().refused().isEmpty() ? "" : " (" + plan.services().refused().size() + " refused by the"
                + " group's namespace or address rules, see status.refusedServices)"), generation);
    Set<String> statusServices = new TreeSet<>(plan.services().keys());
    statusServices.addAll(troubled);
    Set<String> refused = plan.services().refused();
    // null, not empty, when none: the status read back leaves both out, and an unchanged status is not patched.
    return new KeepalivedGroupStatus(new TreeMap<>(ids.ids()), conditions, generation, List.copyOf(statusServices),
        plan.services().attached().size(), plan.instances(), plan.nodes().size(), plan.space(),
        refused.isEmpty() ? null : refused.stream().limit(KeepalivedGroupStatus.MAX_REFUSED_LISTED).toList(),
        refused.isEmpty() ? null : refused.size());
  }

  /** Patches the status only when it differs from what the group shows. */
  static UpdateControl<KeepalivedGroup> patchIfChanged(KeepalivedGroup group, KeepalivedGroupStatus status) {
    if (status.equals(group.getStatus())) {
      return UpdateControl.noUpdate();
    }
    KeepalivedGroup patch = new KeepalivedGroup();
    patch.setMetadata(new ObjectMetaBuilder().withName(group.getMetadata().getName())
        .withNamespace(group.getMetadata().getNamespace()).build());
    patch.setStatus(status);
    return UpdateControl.patchStatus(patch);
  }

  /**
   * When a reconciled group is looked at again on its own: when its retired router ids may be released (they may
   * serve instances still waiting), or soon while instances wait for a free id; empty for nothing to wait for.
   */
  static Optional<Duration> requeue(RouterIds.Result ids, Duration routerIdGrace) {
    if (ids.retiring()) {
      Duration again = routerIdGrace.plusSeconds(1);
      return Optional.of(ids.exhausted().isEmpty() || again.compareTo(RETRY_EXHAUSTED) < 0 ? again : RETRY_EXHAUSTED);
    }
    return ids.exhausted().isEmpty() ? Optional.empty() : Optional.of(RETRY_EXHAUSTED);
  }

  /** The Event reason for a problem of the plan. */
  static String reason(Problem.Kind kind) {
    return switch (kind) {
      case NO_VIP -> "NoVIPYet";
      case DUPLICATE_VIP -> "DuplicateVIP";
      case VERBATIM_REFUSED -> "VerbatimConfigRefused";
      case NO_ROUTER_ID -> "RouterIDsExhausted";
      case ROUTER_ID_CONFLICT -> "RouterIDConflict";
    };
  }

  /** The first items of a set, for a message that stays short. */
  static String first(Set<String> items) {
    String listed = items.stream().limit(LISTED_IN_MESSAGES).collect(Collectors.joining(", "));
    return items.size() > LISTED_IN_MESSAGES ? listed + ", ..." : listed;
  }
}
