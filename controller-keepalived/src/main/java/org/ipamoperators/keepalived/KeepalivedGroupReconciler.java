package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.WorkflowReconcileResult;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.keepalived.api.KeepalivedGroupStatus;
import org.ipamoperators.keepalived.config.GroupSettings;
import org.ipamoperators.keepalived.config.InstancePlan;
import org.ipamoperators.keepalived.config.InstancePlanner;
import org.ipamoperators.keepalived.config.KeepalivedConfigRenderer;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.VipHandover;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles a KeepalivedGroup in four steps. Observe ({@link GroupInputs}, {@link PasswordSecrets}): the Services
 * pointing to it, its nodes, its password and what other groups render, from the event sources' caches. Decide
 * ({@link GroupPlan}): the VIPs it may take over ({@link VipHandover}), its VRRP instances ({@link InstancePlanner}),
 * their router ids in the shared ledger ({@link RouterIds}) and every node's keepalived.conf
 * ({@link KeepalivedConfigRenderer}). Apply: the decision goes into the context and the workflow of the group's
 * dependents ({@link GroupDependents}) writes ConfigMap, DaemonSet and, where the API serves it and the group has a
 * metrics port, PodMonitor, in this order, by server-side apply as {@code ipam-keepalived}; same input, same
 * bytes, nothing written when nothing changed; a write the API server refuses is an {@code ApplyFailed} condition
 * and Event, nothing after it is written, and it is tried again with back-off. Report ({@link GroupReport}):
 * Events, conditions, status and when to look again. A problem of one service is a Warning Event on that Service
 * and a condition on the group; every other service is still announced. A bad spec or a missing password leaves the
 * running configuration as it is.
 */
@ControllerConfiguration(name = "keepalivedgroups", finalizerName = KeepalivedAnnotations.FINALIZER,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
@Workflow(explicitInvocation = true, handleExceptionsInReconciler = true, dependents = {
    @Dependent(name = GroupDependents.CONFIG_MAP, type = GroupDependents.ConfigMapDependent.class,
        useEventSourceWithName = GroupInputs.CONFIG_MAPS),
    @Dependent(name = GroupDependents.DAEMON_SET, type = GroupDependents.DaemonSetDependent.class,
        useEventSourceWithName = GroupInputs.DAEMON_SETS, dependsOn = GroupDependents.CONFIG_MAP),
    @Dependent(name = GroupDependents.POD_MONITOR, type = GroupDependents.PodMonitorDependent.class,
        dependsOn = GroupDependents.DAEMON_SET, activationCondition = GroupDependents.PodMonitorServed.class,
        reconcilePrecondition = GroupDependents.HasMetricsPort.class)})
public class KeepalivedGroupReconciler implements Reconciler<KeepalivedGroup>, Cleaner<KeepalivedGroup> {
  private static final Logger LOG = LoggerFactory.getLogger(KeepalivedGroupReconciler.class);
  /** How long an answer of API discovery (is the PodMonitor API served?) is used, as long as its CRD is unchanged. */
  private static final Duration DISCOVERY_REFRESH = Duration.ofMinutes(5);

  private final KeepalivedSettings settings;
  private final RouterIds routerIds;
  private final MetricsPorts metricsPorts;
  private final EventRecorder events;
  private final KeepalivedMetrics metrics;
  private final PasswordSecrets passwords;
  private final PodMonitorApi podMonitorApi;
  /** Groups waiting for a refused write or for a VIP another group still renders: 2 s doubling to 30 s. */
  private final RetryBackoff retries = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));
  private GroupInputs inputs;

  public KeepalivedGroupReconciler(KubernetesClient client, KeepalivedSettings settings, MeterRegistry registry) {
    this.settings = settings;
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    this.routerIds = new RouterIds(ledger, settings.routerIdGrace(), Clock.systemUTC());
    this.metricsPorts = new MetricsPorts(ledger, settings.metricsPorts());
    this.events = new EventRecorder(client, "keepalived-controller");
    this.metrics = new KeepalivedMetrics(registry);
    this.passwords = new PasswordSecrets(client);
    this.podMonitorApi = new PodMonitorApi(client, DISCOVERY_REFRESH);
  }

  @Override
  public List<EventSource<?, KeepalivedGroup>> prepareEventSources(EventSourceContext<KeepalivedGroup> context) {
    inputs = new GroupInputs(context, passwords.eventSource(context, settings.secretPoll()));
    return inputs.eventSources();
  }

  @Override
  public UpdateControl<KeepalivedGroup> reconcile(KeepalivedGroup group, Context<KeepalivedGroup> context) {
    Optional<String> refused = GroupPolicy.refusal(group, settings);
    if (refused.isPresent()) {
      return keepRunningConfig(group, GroupPolicy.REASON, refused.get());
    }
    PasswordSecrets.Password password = passwords.password(group);
    if (password.problem().isPresent()) {
      return keepRunningConfig(group, "PasswordUnavailable",
          password.problem().get() + ": the configuration in use is left as it is");
    }
    GroupSettings groupSettings;
    AttachRules rules;
    try {
      groupSettings = GroupSpecs.settings(group, password.value());
      rules = settings.attach().forGroup(group.getMetadata().getNamespace(), group.getSpec());
    } catch (IllegalArgumentException e) {
      return keepRunningConfig(group, "InvalidSpec", e.getMessage());
    }
    GroupPlan plan = plan(group, groupSettings, rules);
    MetricsPorts.Port metricsPort = metricsPorts.sync(owner(group));
    plan.notes(group).forEach(this::record);
    if (metricsPort.problem() != null) {
      events.warning(group, "NoMetricsPort", metricsPort.problem());
    }
    GroupDependents.Input objects = new GroupDependents.Input(settings, plan.rendering().configs(),
        metricsPort.port(), podMonitorApi.served(inputs.podMonitorCrd()),
        () -> metrics.configWritten(group.getMetadata().getNamespace(), group.getMetadata().getName()));
    Optional<KubernetesClientException> refusal = write(objects, context);
    if (refusal.isPresent()) {
      // Refused (too large a ConfigMap, an invalid field, no permission, an admission policy): say so, and try
      // again with back-off until it goes through; a VIP that left this group stays rendered here meanwhile.
      Duration retry = retries.next(group.getMetadata().getUid());
      return keepRunningConfig(group, "ApplyFailed", "the API server refused an object of the group ("
          + refusal.get().getCode() + "): " + refusal.get().getMessage() + "; retrying in " + retry.toSeconds()
          + " s").rescheduleAfter(retry);
    }
    boolean podMonitor = objects.metricsPort() != null && objects.podMonitorServed();
    return report(group, plan, metricsPort.port(), podMonitor);
  }

  /**
   * Decides what the group announces: the Services' VIPs its rules allow, less those another group's configuration
   * still renders, the VRRP instances, their router ids (kept in the ledger, the one write of this step) and every
   * node's configuration.
   */
  private GroupPlan plan(KeepalivedGroup group, GroupSettings groupSettings, AttachRules rules) {
    KeepalivedGroupSpec spec = group.getSpec();
    List<KeepalivedNode> groupNodes = inputs.nodes(spec);
    ServiceSelection selection = ServiceSelection.of(group.key(), inputs.services(group.key()),
        ns -> inputs.namespaceAllowed(spec, ns), rules);
    RenderedElsewhere.View view = inputs.rendered(group);
    VipHandover.Decision handover = VipHandover.decide(selection.vips(), view.elsewhere(), view.here(),
        view.renderedHere());
    selection = selection.handedOver(handover);
    InstancePlan plan = InstancePlanner.plan(groupSettings, selection.vips(), groupNodes);
    IdSpace space = RouterIds.space(spec.routerIdSpaceOrDefault());
    KeepalivedGroupStatus old = group.getStatus();
    RouterIds.Result ids = routerIds.sync(owner(group), space, plan.routerIdKeys(),
        new HashSet<>(spec.blacklistOrEmpty()), old == null || old.routerIDs() == null ? Map.of() : old.routerIDs(),
        settings.routerIdsPerNamespace());
    InstancePlan.Assembly assembly = plan.withRouterIds(ids.ids());
    return new GroupPlan(groupNodes, selection.withProblems(assembly.problems()), space.name(), ids, assembly,
        GroupPlan.Rendering.of(assembly.model()), handover.deferred());
  }

  /**
   * Runs the workflow of the group's objects ({@link GroupDependents}) with {@code objects} as their desired state.
   * A dependent that fails stops the ones after it (ConfigMap, DaemonSet, PodMonitor). A refused write is returned;
   * any other failure is thrown, and the reconcile retried.
   */
  private static Optional<KubernetesClientException> write(GroupDependents.Input objects,
      Context<KeepalivedGroup> context) {
    objects.putInto(context);
    WorkflowReconcileResult result = context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
    Optional<KubernetesClientException> refusal = result.getErroredDependents().values().stream()
        .map(GroupDependents::refusal).flatMap(Optional::stream).findFirst();
    if (refusal.isEmpty()) {
      result.throwAggregateExceptionIfErrorsPresent();
    }
    return refusal;
  }

  /** Status, metrics and when to look again, for a group whose objects are written. */
  private UpdateControl<KeepalivedGroup> report(KeepalivedGroup group, GroupPlan plan, Integer metricsPort,
      boolean podMonitor) {
    KeepalivedGroupStatus status = GroupReport.reconciled(group, plan, metricsPort, podMonitor,
        settings.routerIdsPerNamespace());
    metrics.set(group.getMetadata().getNamespace(), group.getMetadata().getName(), plan.ids().ids().size(),
        plan.ids().exhausted().size(), plan.instances(), plan.vipCount(), plan.services().attached().size(),
        plan.services().troubled().size(), plan.nodes().size());
    UpdateControl<KeepalivedGroup> control = GroupReport.patchIfChanged(group, status);
    if (!plan.deferred().isEmpty()) {
      return control.rescheduleAfter(retries.next(group.getMetadata().getUid()));
    }
    retries.reset(group.getMetadata().getUid());
    return GroupReport.requeue(plan.ids(), settings.routerIdGrace()).map(control::rescheduleAfter).orElse(control);
  }

  /** Leaves ConfigMap, DaemonSet and router ids as they are; reports why on the group. */
  private UpdateControl<KeepalivedGroup> keepRunningConfig(KeepalivedGroup group, String reason, String message) {
    LOG.info("KeepalivedGroup {}: {}: {}", group.key(), reason, message);
    events.warning(group, reason, message);
    return GroupReport.patchIfChanged(group, GroupReport.keptRunning(group, reason, message));
  }

  private void record(GroupReport.Note note) {
    if (note.warning()) {
      events.warning(note.on(), note.reason(), note.message());
    } else {
      events.normal(note.on(), note.reason(), note.message());
    }
  }

  private static ClaimOwner owner(KeepalivedGroup group) {
    return RouterIds.owner(group.getMetadata().getNamespace(), group.getMetadata().getName(),
        group.getMetadata().getUid());
  }

  /**
   * Deletion: the group's router ids and metrics port are retired for the grace, not released (its pods, until the
   * garbage collector removes them with the other owned objects, still run VRRP with those ids), then released by
   * {@link OrphanRouterIdReconciler}.
   */
  @Override
  public DeleteControl cleanup(KeepalivedGroup group, Context<KeepalivedGroup> context) {
    if (!routerIds.retireAll(owner(group))) {
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(1000); // a claim changed meanwhile: again
    }
    metrics.forget(group.getMetadata().getNamespace(), group.getMetadata().getName());
    LOG.info("KeepalivedGroup {} deleted: router ids and metrics port retired for {}", group.key(),
        settings.routerIdGrace());
    return DeleteControl.defaultDelete();
  }
}
