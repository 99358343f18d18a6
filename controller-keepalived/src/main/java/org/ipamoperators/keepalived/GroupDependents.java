package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Optional;
import java.util.SortedMap;
import org.ipamoperators.keepalived.api.KeepalivedGroup;

/**
 * A group's objects as the dependents of its reconciler's workflow: ConfigMap, then DaemonSet, then PodMonitor. The
 * desired state comes from the {@link Input} the reconcile puts into the context (it needs the router-id ledger,
 * so it is decided before the workflow runs); the objects are built by {@link GroupObjects}, owner reference
 * included. Each is written with server-side apply by field manager {@value #FIELD_MANAGER} (what earlier versions
 * wrote is taken over without a conflict), and only when the fields that manager owns differ from the desired ones.
 * No dependent deletes anything: the garbage collector removes the objects with their group.
 */
final class GroupDependents {
  static final String FIELD_MANAGER = "ipam-keepalived";
  static final String CONFIG_MAP = "configmap";
  static final String DAEMON_SET = "daemonset";
  static final String POD_MONITOR = "podmonitor";

  private GroupDependents() {}

  /**
   * What the dependents of one reconcile write.
   *
   * @param metricsPort the group's metrics port; null for none (then no PodMonitor is written)
   * @param podMonitorServed whether the API server serves PodMonitors (the same answer for every group)
   * @param configWritten called after each write of the ConfigMap
   */
  record Input(KeepalivedSettings settings, SortedMap<String, String> configs, Integer metricsPort,
      boolean podMonitorServed, Runnable configWritten) {
    static Input of(Context<KeepalivedGroup> context) {
      return context.managedWorkflowAndDependentResourceContext().getMandatory(Input.class, Input.class);
    }

    void putInto(Context<KeepalivedGroup> context) {
      context.managedWorkflowAndDependentResourceContext().put(Input.class, this);
    }
  }

  /** The refusal among a workflow's errors: 422 (invalid, too large), 403 (forbidden, admission) or 413. */
  static Optional<KubernetesClientException> refusal(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof KubernetesClientException e && (e.getCode() == 422 || e.getCode() == 403
          || e.getCode() == 413)) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }

  /**
   * What the group's three dependents share: written with server-side apply as {@value #FIELD_MANAGER} (also the
   * ConfigMap, which JOSDK leaves out of server-side apply by default), matched as that manager, read from the event
   * source by the group's own id, with the owner reference {@link GroupObjects} sets.
   */
  abstract static class GroupDependent<R extends HasMetadata> extends KubernetesDependentResource<R, KeepalivedGroup>
      implements Creator<R, KeepalivedGroup>, Updater<R, KeepalivedGroup> {
    GroupDependent(Class<R> type) {
      super(type);
    }

    /** Called after each write of the object. */
    void written(Context<KeepalivedGroup> context) {}

    @Override
    public R create(R desired, KeepalivedGroup group, Context<KeepalivedGroup> context) {
      R written = super.create(desired, group, named(context));
      written(context);
      return written;
    }

    @Override
    public R update(R actual, R desired, KeepalivedGroup group, Context<KeepalivedGroup> context) {
      R written = super.update(actual, desired, group, named(context));
      written(context);
      return written;
    }

    @Override
    public Matcher.Result<R> match(R actual, R desired, KeepalivedGroup group, Context<KeepalivedGroup> context) {
      return super.match(actual, desired, group, named(context));
    }

    @Override
    public Optional<R> getSecondaryResource(KeepalivedGroup group, Context<KeepalivedGroup> context) {
      return eventSource().flatMap(s -> s.get(ResourceID.fromResource(group)));
    }

    @Override
    protected boolean useSSA(Context<KeepalivedGroup> context) {
      return true;
    }

    @Override
    protected void addReferenceHandlingMetadata(R desired, KeepalivedGroup group) {
      // GroupObjects sets the controller owner reference.
    }
  }

  /** The group's ConfigMap; a real write is counted ({@code ipam_keepalived_group_config_changes}). */
  public static final class ConfigMapDependent extends GroupDependent<ConfigMap> {
    public ConfigMapDependent() {
      super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(KeepalivedGroup group, Context<KeepalivedGroup> context) {
      // Keys of nodes gone are dropped: the ConfigMap is ours, so applying it without them removes them.
      return annotatable(GroupObjects.configMap(group, Input.of(context).configs()));
    }

    @Override
    void written(Context<KeepalivedGroup> context) {
      Input.of(context).configWritten().run();
    }
  }

  /** The group's DaemonSet. */
  public static final class DaemonSetDependent extends GroupDependent<DaemonSet> {
    public DaemonSetDependent() {
      super(DaemonSet.class);
    }

    @Override
    protected DaemonSet desired(KeepalivedGroup group, Context<KeepalivedGroup> context) {
      Input input = Input.of(context);
      return annotatable(GroupObjects.daemonSet(group, input.settings(), input.metricsPort()));
    }
  }

  /**
   * The group's PodMonitor, with an informer of its own that is registered while the API is served
   * ({@link PodMonitorServed}) and only for a group with a metrics port ({@link HasMetricsPort}). A PodMonitor of a
   * group that lost its metrics port is left in place (not a Deleter).
   */
  public static final class PodMonitorDependent extends GroupDependent<PodMonitor> {
    public PodMonitorDependent() {
      super(PodMonitor.class);
    }

    @Override
    protected PodMonitor desired(KeepalivedGroup group, Context<KeepalivedGroup> context) {
      GenericKubernetesResource generic = GroupObjects.podMonitor(group);
      PodMonitor pm = new PodMonitor();
      pm.setMetadata(generic.getMetadata());
      generic.getAdditionalProperties().forEach(pm::setAdditionalProperty);
      return annotatable(pm);
    }

    @Override
    protected Optional<SecondaryToPrimaryMapper<PodMonitor>> getSecondaryToPrimaryMapper(
        EventSourceContext<KeepalivedGroup> context) {
      return Optional.of(Mappers.fromOwnerReferences(KeepalivedGroup.class));
    }
  }

  /**
   * Activation of the PodMonitor dependent: the API serves PodMonitors (its CRD is there and established). JOSDK's
   * {@code CRDPresentActivationCondition} asks only whether the CRD exists, stops asking after ten answers and
   * needs a typed resource class; this one uses the reconcile's answer ({@link PodMonitorApi}), which follows the
   * CRD informer. The same for every group: a false answer deregisters the PodMonitor informer.
   */
  public static final class PodMonitorServed implements Condition<PodMonitor, KeepalivedGroup> {
    @Override
    public boolean isMet(DependentResource<PodMonitor, KeepalivedGroup> dependent,
        KeepalivedGroup group, Context<KeepalivedGroup> context) {
      return Input.of(context).podMonitorServed();
    }
  }

  /** Precondition of the PodMonitor dependent: the group has a metrics port. */
  public static final class HasMetricsPort implements Condition<PodMonitor, KeepalivedGroup> {
    @Override
    public boolean isMet(DependentResource<PodMonitor, KeepalivedGroup> dependent,
        KeepalivedGroup group, Context<KeepalivedGroup> context) {
      return Input.of(context).metricsPort() != null;
    }
  }

  /**
   * A PodMonitor (monitoring.coreos.com/v1) as a typed resource: JOSDK creates the informer of a dependent even
   * to deregister it, and an informer of {@code GenericKubernetesResource}s needs API discovery to find the
   * resource, which fails while the API is not served; a class that names group, version and plural does not.
   */
  @Group("monitoring.coreos.com")
  @Version("v1")
  @Kind("PodMonitor")
  @Plural("podmonitors")
  public static final class PodMonitor extends GenericKubernetesResource implements Namespaced {
    public PodMonitor() {
      setApiVersion(PodMonitorApi.API_VERSION);
      setKind("PodMonitor");
    }
  }

  /** JOSDK keeps its event-filtering annotation in the desired object's annotations: they must be a map. */
  private static <R extends HasMetadata> R annotatable(R desired) {
    if (desired.getMetadata().getAnnotations() == null) {
      desired.getMetadata().setAnnotations(new HashMap<>());
    }
    return desired;
  }

  /**
   * The context with {@value #FIELD_MANAGER} as field manager. JOSDK applies dependents (and matches them) as the
   * controller's field manager, which also applies the group's status and finalizer; changing that one would leave
   * the status fields earlier versions applied owned by their manager, never removed.
   */
  static <P extends HasMetadata> Context<P> named(Context<P> context) {
    ControllerConfiguration<P> config = delegate(ControllerConfiguration.class, context.getControllerConfiguration(),
        "fieldManager", FIELD_MANAGER);
    return delegate(Context.class, context, "getControllerConfiguration", config);
  }

  @SuppressWarnings("unchecked")
  private static <T> T delegate(Class<?> type, Object target, String method, Object answer) {
    return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
      if (m.getName().equals(method) && m.getParameterCount() == 0) {
        return answer;
      }
      try {
        return m.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    });
  }
}
