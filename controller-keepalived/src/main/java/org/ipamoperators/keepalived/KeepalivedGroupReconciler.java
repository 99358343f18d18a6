package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingConfigurationBuilder;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingEventSource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.LabelSelectors;
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
import org.ipamoperators.keepalived.config.Notice;
import org.ipamoperators.keepalived.config.Problem;
import org.ipamoperators.keepalived.config.RenderedConfig;
import org.ipamoperators.keepalived.config.ServiceRef;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.keepalived.config.VipHandover;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles a KeepalivedGroup: reads the Services pointing to it, its nodes and its password, plans the VRRP
 * instances (pure: {@link InstancePlanner}), keeps their router ids in the shared ledger ({@link RouterIds}),
 * renders every node's keepalived.conf (pure: {@link KeepalivedConfigRenderer}) into the group's ConfigMap and
 * applies the DaemonSet (and PodMonitor when that API is served). Same input, same bytes: nothing is written when
 * nothing changed. A problem of one service is a Warning Event on that Service and a condition on the group; every
 * other service is still announced. A bad spec or a missing password leaves the running configuration as it is.
 */
@ControllerConfiguration(name = "keepalivedgroups", finalizerName = KeepalivedAnnotations.FINALIZER,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class KeepalivedGroupReconciler implements Reconciler<KeepalivedGroup>, Cleaner<KeepalivedGroup> {
  static final String FIELD_MANAGER = "ipam-keepalived";
  static final String PODMONITOR_CRD = "podmonitors.monitoring.coreos.com";
  private static final Logger LOG = LoggerFactory.getLogger(KeepalivedGroupReconciler.class);
  private static final Duration RETRY_EXHAUSTED = Duration.ofSeconds(60);
  private static final int LISTED_IN_MESSAGES = 10;

  private final KubernetesClient client;
  private final KeepalivedSettings settings;
  private final RouterIds routerIds;
  private final MetricsPorts metricsPorts;
  private final EventRecorder events;
  private final KeepalivedMetrics metrics;
  private final RenderedElsewhere rendered = new RenderedElsewhere();
  /** Groups waiting for a refused write or for a VIP another group still renders: 2 s doubling to 30 s. */
  private final RetryBackoff retries = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));

  private InformerEventSource<Service, KeepalivedGroup> services;
  private InformerEventSource<Node, KeepalivedGroup> nodes;
  private PerResourcePollingEventSource<Secret, KeepalivedGroup, String> secrets;
  private InformerEventSource<Namespace, KeepalivedGroup> namespaces;
  private InformerEventSource<ConfigMap, KeepalivedGroup> configMaps;
  private io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache<KeepalivedGroup> groupCache;

  public KeepalivedGroupReconciler(KubernetesClient client, KeepalivedSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this.client = client;
    this.settings = settings;
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    this.routerIds = new RouterIds(ledger, settings.routerIdGrace(), java.time.Clock.systemUTC());
    this.metricsPorts = new MetricsPorts(ledger, settings.metricsPorts());
    this.events = new EventRecorder(client, "keepalived-controller");
    this.metrics = new KeepalivedMetrics(registry);
  }

  @Override
  public List<EventSource<?, KeepalivedGroup>> prepareEventSources(EventSourceContext<KeepalivedGroup> context) {
    // A Service event concerns the group its annotation names and every group that announced it before (the
    // annotation may have changed or gone).
    groupCache = context.getPrimaryCache();
    services = new InformerEventSource<>(InformerEventSourceConfiguration.from(Service.class, KeepalivedGroup.class)
        .withSecondaryToPrimaryMapper(s -> groupsOf(s, context)).build(), context);
    nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, KeepalivedGroup.class)
        .withOnUpdateFilter(GroupNodes::relevantChange)
        .withSecondaryToPrimaryMapper(n -> all(context)).build(), context);
    // The password Secret a group names, read by name (the operator may neither list nor watch Secrets, so no other
    // Secret ever reaches its memory) and read again every secretPoll to notice a rotation.
    secrets = new PerResourcePollingEventSource<>(Secret.class, context,
        new PerResourcePollingConfigurationBuilder<Secret, KeepalivedGroup, String>(
            g -> {
              // Always one entry: a Secret that goes away must change the cache (an empty result does not
              // reliably), so its absence is a placeholder of the same name.
              try {
                return Set.of(passwordSecret(g).orElseGet(() -> absentSecret(g, "absent")));
              } catch (KubernetesClientException e) {
                return Set.of(absentSecret(g, "unreadable " + e.getCode())); // the reconcile says why
              }
            }, settings.secretPoll())
            .withName("password-secrets")
            .withRegisterPredicate(g -> secretName(g) != null)
            .withResourceIDMapper(s -> s.getMetadata().getName()).build());
    namespaces = new InformerEventSource<>(InformerEventSourceConfiguration.from(Namespace.class, KeepalivedGroup.class)
        .withOnUpdateFilter((n, o) -> !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels()))
        .withSecondaryToPrimaryMapper(n -> groups(context, g -> g.getSpec() != null
            && g.getSpec().namespaceSelector() != null)).build(), context);
    // Owned objects: an edit or deletion by hand is repaired at once.
    configMaps = new InformerEventSource<>(InformerEventSourceConfiguration.from(ConfigMap.class, KeepalivedGroup.class)
        .withLabelSelector(KeepalivedAnnotations.GROUP_LABEL)
        .withSecondaryToPrimaryMapper(cm -> {
          // Its group, and the groups with Services not (fully) announced: they may wait for a VIP this one let go.
          Set<ResourceID> ids = new HashSet<>(Mappers.fromOwnerReferences(KeepalivedGroup.class).toPrimaryResourceIDs(cm));
          ids.addAll(groups(context, g -> "True".equals(condition(g, COND_SERVICE_PROBLEMS))));
          return ids;
        }).build(), context);
    InformerEventSource<DaemonSet, KeepalivedGroup> daemonSets = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(DaemonSet.class, KeepalivedGroup.class)
            .withLabelSelector(KeepalivedAnnotations.GROUP_LABEL)
            .withOnUpdateFilter((n, o) -> !Objects.equals(n.getSpec(), o.getSpec())
                || !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels()))
            .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(KeepalivedGroup.class)).build(), context);
    // The PodMonitor API appearing (or going) is noticed at once, not only at start.
    InformerEventSource<CustomResourceDefinition, KeepalivedGroup> crds = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(CustomResourceDefinition.class, KeepalivedGroup.class)
            .withFieldSelector(new FieldSelector(new FieldSelector.Field("metadata.name", PODMONITOR_CRD)))
            .withSecondaryToPrimaryMapper(c -> all(context)).build(), context);
    // A router id claim deleted by hand is re-claimed by its group; an id released may serve exhausted groups.
    InformerEventSource<IDClaim, KeepalivedGroup> claims = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(IDClaim.class, KeepalivedGroup.class)
            .withOnAddFilter(c -> false).withOnUpdateFilter((n, o) -> false)
            .withSecondaryToPrimaryMapper(c -> {
              Set<ResourceID> ids = new HashSet<>(groups(context, g -> "True".equals(condition(g, COND_EXHAUSTED))));
              ClaimOwner o = c.getSpec() == null ? null : c.getSpec().owner();
              if (o != null && RouterIds.CONTROLLER.equals(o.controller()) && o.namespace() != null) {
                ids.add(new ResourceID(o.name(), o.namespace()));
              }
              return ids;
            }).build(), context);
    return List.of(services, nodes, secrets, namespaces, configMaps, daemonSets, crds, claims);
  }

  static final String COND_READY = "Ready";
  static final String COND_EXHAUSTED = "RouterIDsExhausted";
  static final String COND_SERVICE_PROBLEMS = "ServiceProblems";

  private static Set<ResourceID> all(EventSourceContext<KeepalivedGroup> context) {
    return groups(context, g -> true);
  }

  private static Set<ResourceID> groups(EventSourceContext<KeepalivedGroup> context,
      java.util.function.Predicate<KeepalivedGroup> which) {
    return context.getPrimaryCache().list(which).map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private static Set<ResourceID> groupsOf(Service s, EventSourceContext<KeepalivedGroup> context) {
    Set<ResourceID> ids = new HashSet<>();
    AttachedService.groupKey(s).ifPresent(k -> {
      int slash = k.indexOf('/');
      ids.add(new ResourceID(k.substring(slash + 1), k.substring(0, slash)));
    });
    String key = AttachedService.key(s);
    ids.addAll(groups(context, g -> g.getStatus() != null && g.getStatus().services() != null
        && g.getStatus().services().contains(key)));
    return ids;
  }

  static String condition(KeepalivedGroup g, String type) {
    if (g.getStatus() == null || g.getStatus().conditions() == null) {
      return null;
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).map(Condition::getStatus)
        .findFirst().orElse(null);
  }

  @Override
  public UpdateControl<KeepalivedGroup> reconcile(KeepalivedGroup group, Context<KeepalivedGroup> context) {
    KeepalivedGroupSpec spec = group.getSpec();
    KeepalivedGroupStatus old = group.getStatus();
    Long generation = group.getMetadata().getGeneration();
    List<Condition> conditions = old == null ? null : old.conditions();

    Optional<String> refused = GroupPolicy.refusal(group, settings);
    if (refused.isPresent()) {
      return keepRunningConfig(group, conditions, generation, GroupPolicy.REASON, refused.get());
    }

    Optional<String> password = Optional.empty();
    if (spec != null && spec.passwordAuth() != null) {
      Optional<String> problem = Optional.empty();
      String secretName = secretName(group);
      Secret secret;
      try {
        secret = passwordSecret(group).orElse(null);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 403) {
          throw e; // transient: retried
        }
        secret = null;
        problem = Optional.of("Secret " + secretName + " of passwordAuth cannot be read (403): the operator reads"
            + " Secrets only in the namespaces it watches");
      }
      String key = spec.passwordAuth().keyOrDefault();
      if (problem.isPresent()) {
        // reported below
      } else if (secret == null) {
        problem = Optional.of("Secret " + secretName + " of passwordAuth does not exist");
      } else {
        password = secretValue(secret, key);
        if (password.isEmpty()) {
          problem = Optional.of("Secret " + secretName + " has no key '" + key + "'");
        }
      }
      if (problem.isPresent()) {
        return keepRunningConfig(group, conditions, generation, "PasswordUnavailable",
            problem.get() + ": the configuration in use is left as it is");
      }
    }
    GroupSettings groupSettings;
    try {
      groupSettings = GroupSpecs.settings(group, password);
    } catch (IllegalArgumentException e) {
      return keepRunningConfig(group, conditions, generation, "InvalidSpec", e.getMessage());
    }

    // Nodes and services.
    boolean fromIp = spec.interfaceFromIP() != null;
    List<KeepalivedNode> groupNodes = nodes.list(n -> GroupNodes.selected(n, spec.nodeSelector()))
        .map(n -> GroupNodes.toKeepalived(n, fromIp)).sorted(java.util.Comparator.comparing(KeepalivedNode::name))
        .toList();
    Map<ServiceRef, Service> attached = new TreeMap<>();
    List<ServiceVips> vips = new ArrayList<>();
    Set<String> troubled = new TreeSet<>();
    Set<String> keys = new TreeSet<>();
    String groupKey = group.key();
    for (Service s : services.list(s -> AttachedService.groupKey(s).filter(groupKey::equals).isPresent()
        && AttachedService.eligible(s) && s.getMetadata().getDeletionTimestamp() == null).toList()) {
      String sk = AttachedService.key(s);
      if (!namespaceAllowed(spec, s.getMetadata().getNamespace())) {
        events.warning(s, "NamespaceNotAllowed", "Namespace " + s.getMetadata().getNamespace()
            + " may not attach VIPs to KeepalivedGroup " + groupKey + " (its namespaceSelector does not match):"
            + " the VIPs are not announced");
        troubled.add(sk);
        continue;
      }
      AttachedService a = AttachedService.read(s);
      for (String p : a.problems()) {
        events.warning(s, "InvalidServiceConfig", p);
        troubled.add(sk);
      }
      attached.put(a.vips().service(), s);
      vips.add(a.vips());
      keys.add(sk);
    }

    List<VipHandover.Deferred> deferred = handOver(group, vips, attached, troubled);
    InstancePlan plan = InstancePlanner.plan(groupSettings, vips, groupNodes);
    ClaimOwner owner = RouterIds.owner(group.getMetadata().getNamespace(), group.getMetadata().getName(),
        group.getMetadata().getUid());
    IdSpace space = RouterIds.space(spec.routerIdSpaceOrDefault());
    RouterIds.Result ids = routerIds.sync(owner, space, plan.routerIdKeys(), new HashSet<>(spec.blacklistOrEmpty()),
        old == null || old.routerIDs() == null ? Map.of() : old.routerIDs(), settings.routerIdsPerNamespace());
    for (String moved : ids.moved()) {
      events.normal(group, "RouterIDMoved", "the router id of " + moved + " is blacklisted now: "
          + (ids.ids().containsKey(moved) ? "it moves to " + ids.ids().get(moved) : "no other id is free"));
    }
    InstancePlan.Assembly assembly = plan.withRouterIds(ids.ids());

    // Every problem goes to the services concerned; the others are rendered as usual.
    for (Problem p : assembly.problems()) {
      for (ServiceRef ref : p.services()) {
        Service s = attached.get(ref);
        if (s == null) {
          continue;
        }
        if (p.kind() == Problem.Kind.NO_VIP) {
          events.normal(s, "NoVIPYet", p.message());
        } else {
          events.warning(s, reason(p.kind()), p.message());
          troubled.add(ref.key());
        }
      }
    }
    SortedMap<String, String> configs = new TreeMap<>();
    Set<Notice> notices = new LinkedHashSet<>();
    for (KeepalivedNode node : assembly.model().nodes()) {
      RenderedConfig rc = KeepalivedConfigRenderer.render(assembly.model(), node.name());
      configs.put(node.name(), rc.text());
      notices.addAll(rc.notices());
    }
    for (Notice n : notices) {
      events.normal(group, "ConfigNotice", n.toString());
    }

    MetricsPorts.Port metricsPort = metricsPorts.sync(owner);
    if (metricsPort.problem() != null) {
      events.warning(group, "NoMetricsPort", metricsPort.problem());
    }
    boolean podMonitor;
    try {
      applyConfigMap(group, configs);
      apply(GroupObjects.daemonSet(group, settings, metricsPort.port()));
      podMonitor = metricsPort.port() != null && podMonitorServed();
      if (podMonitor) {
        applyPodMonitor(group);
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 422 && e.getCode() != 403 && e.getCode() != 413) {
        throw e; // transient: retried
      }
      // Refused (too large a ConfigMap, an invalid field, no permission, an admission policy): say so, and try
      // again with back-off until it goes through; a VIP that left this group stays rendered here meanwhile.
      Duration retry = retries.next(group.getMetadata().getUid());
      return keepRunningConfig(group, conditions, generation, "ApplyFailed", "the API server refused an object of"
          + " the group (" + e.getCode() + "): " + e.getMessage() + "; retrying in " + retry.toSeconds() + " s")
          .rescheduleAfter(retry);
    }

    long vipCount = assembly.model().instances().stream().mapToLong(i -> i.vips().size()).sum();
    conditions = Conditions.set(conditions, COND_READY, true, "Reconciled", attached.size() + " services, "
        + assembly.model().instances().size() + " VRRP instances, " + groupNodes.size() + " nodes"
        + (metricsPort.port() != null ? ", metrics on port " + metricsPort.port() : ", no metrics port free")
        + (podMonitor ? ", PodMonitor" : ""), generation);
    conditions = Conditions.set(conditions, COND_EXHAUSTED, !ids.exhausted().isEmpty(),
        ids.exhausted().isEmpty() ? "RouterIDsAvailable" : ids.quotaReached() ? "NamespaceQuotaReached" : "NoFreeRouterID",
        ids.exhausted().isEmpty() ? "every instance has a router id" : ids.exhausted().size()
            + " instances have no router id in space " + space.name() + (ids.quotaReached()
                ? " (the groups of namespace " + group.getMetadata().getNamespace() + " hold the "
                    + settings.routerIdsPerNamespace() + " ids the operator allows a namespace): "
                : " (its ids are taken or blacklisted): ") + first(ids.exhausted()), generation);
    conditions = Conditions.set(conditions, COND_SERVICE_PROBLEMS, !troubled.isEmpty(),
        troubled.isEmpty() ? "AllAnnounced" : "ServicesNotAnnounced",
        troubled.isEmpty() ? "every attached service is announced" : troubled.size()
            + " services are not (fully) announced, see their Events: " + first(troubled), generation);
    Set<String> statusServices = new TreeSet<>(keys);
    statusServices.addAll(troubled);
    KeepalivedGroupStatus status = new KeepalivedGroupStatus(new TreeMap<>(ids.ids()), conditions, generation,
        List.copyOf(statusServices), attached.size(), assembly.model().instances().size(), groupNodes.size(),
        space.name());
    metrics.set(group.getMetadata().getNamespace(), group.getMetadata().getName(), ids.ids().size(),
        ids.exhausted().size(), assembly.model().instances().size(), vipCount, attached.size(), troubled.size(),
        groupNodes.size());
    UpdateControl<KeepalivedGroup> control = patchIfChanged(group, status);
    if (!deferred.isEmpty()) {
      return control.rescheduleAfter(retries.next(group.getMetadata().getUid()));
    }
    retries.reset(group.getMetadata().getUid());
    if (ids.retiring()) {
      // Back when the retired ids may be released (and taken by the instances waiting, if any).
      Duration again = settings.routerIdGrace().plusSeconds(1);
      return control.rescheduleAfter(ids.exhausted().isEmpty() ? again
          : (again.compareTo(RETRY_EXHAUSTED) < 0 ? again : RETRY_EXHAUSTED));
    }
    return ids.exhausted().isEmpty() ? control : control.rescheduleAfter(RETRY_EXHAUSTED);
  }

  /**
   * Leaves out of {@code vips} every VIP another group's configuration still renders ({@link VipHandover}); each
   * waits with a Warning Event on its Service, which counts as not fully announced. Returns what waits.
   */
  private List<VipHandover.Deferred> handOver(KeepalivedGroup group, List<ServiceVips> vips,
      Map<ServiceRef, Service> attached, Set<String> troubled) {
    // The configuration of a group that is gone counts no more (its pods go with it; its ConfigMap may linger
    // until the garbage collector removes it).
    RenderedElsewhere.View view = rendered.view(configMaps.list(cm -> groupCache.get(
        new ResourceID(cm.getMetadata().getName(), cm.getMetadata().getNamespace())).isPresent()).toList(),
        group.getMetadata().getNamespace(), group.getMetadata().getName());
    VipHandover.Decision d = VipHandover.decide(vips, view.elsewhere(), view.here(), view.renderedHere());
    vips.clear();
    vips.addAll(d.vips());
    for (VipHandover.Deferred w : d.deferred()) {
      events.warning(attached.get(w.service()), "VIPHeldByAnotherGroup", w.vip() + " is still announced by"
          + " KeepalivedGroup " + w.heldBy() + ": it is announced here once that group's configuration no longer"
          + " carries it");
      troubled.add(w.service().key());
    }
    return d.deferred();
  }

  /** Leaves ConfigMap, DaemonSet and router ids as they are; reports why on the group. */
  private UpdateControl<KeepalivedGroup> keepRunningConfig(KeepalivedGroup group, List<Condition> conditions,
      Long generation, String reason, String message) {
    LOG.info("KeepalivedGroup {}: {}: {}", group.key(), reason, message);
    events.warning(group, reason, message);
    KeepalivedGroupStatus old = group.getStatus();
    List<Condition> c = Conditions.set(conditions, COND_READY, false, reason, message, generation);
    KeepalivedGroupStatus status = old == null
        ? new KeepalivedGroupStatus(Map.of(), c, generation, List.of(), 0, 0, 0, null)
        : new KeepalivedGroupStatus(old.routerIDs() == null ? Map.of() : old.routerIDs(), c, generation,
            old.services() == null ? List.of() : old.services(), old.serviceCount(), old.instanceCount(),
            old.nodeCount(), old.routerIDSpace());
    return patchIfChanged(group, status);
  }

  private static UpdateControl<KeepalivedGroup> patchIfChanged(KeepalivedGroup group, KeepalivedGroupStatus status) {
    if (status.equals(group.getStatus())) {
      return UpdateControl.noUpdate();
    }
    KeepalivedGroup patch = new KeepalivedGroup();
    patch.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(group.getMetadata().getName())
        .withNamespace(group.getMetadata().getNamespace()).build());
    patch.setStatus(status);
    return UpdateControl.patchStatus(patch);
  }

  private static String reason(Problem.Kind kind) {
    return switch (kind) {
      case NO_VIP -> "NoVIPYet";
      case DUPLICATE_VIP -> "DuplicateVIP";
      case VERBATIM_REFUSED -> "VerbatimConfigRefused";
      case NO_ROUTER_ID -> "RouterIDsExhausted";
      case ROUTER_ID_CONFLICT -> "RouterIDConflict";
    };
  }

  private static String first(Set<String> items) {
    String listed = items.stream().limit(LISTED_IN_MESSAGES).collect(Collectors.joining(", "));
    return items.size() > LISTED_IN_MESSAGES ? listed + ", ..." : listed;
  }

  private boolean namespaceAllowed(KeepalivedGroupSpec spec, String namespace) {
    if (spec.namespaceSelector() == null) {
      return true;
    }
    Namespace ns = namespaces.get(new ResourceID(namespace)).orElse(null);
    Map<String, String> labels = ns == null || ns.getMetadata().getLabels() == null ? Map.of()
        : ns.getMetadata().getLabels();
    return LabelSelectors.matches(spec.namespaceSelector(), labels);
  }

  private static String secretName(KeepalivedGroup g) {
    return g.getSpec() == null || g.getSpec().passwordAuth() == null || g.getSpec().passwordAuth().secretRef() == null
        ? null : g.getSpec().passwordAuth().secretRef().name();
  }

  /** The group's password Secret, read by name from the API server (never from a cache of every Secret). */
  private Optional<Secret> passwordSecret(KeepalivedGroup g) {
    String name = secretName(g);
    return name == null ? Optional.empty()
        : Optional.ofNullable(client.secrets().inNamespace(g.getMetadata().getNamespace()).withName(name).get());
  }

  private static Secret absentSecret(KeepalivedGroup g, String why) {
    return new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata().withName(secretName(g))
        .withNamespace(g.getMetadata().getNamespace()).withAnnotations(Map.of("ipam.ipamoperators.org/absent", why))
        .endMetadata().build();
  }

  private static Optional<String> secretValue(Secret secret, String key) {
    if (secret.getData() != null && secret.getData().get(key) != null) {
      return Optional.of(new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8));
    }
    if (secret.getStringData() != null && secret.getStringData().get(key) != null) {
      return Optional.of(secret.getStringData().get(key));
    }
    return Optional.empty();
  }

  /** Writes the ConfigMap only when its content differs from what the cache shows (no needless reloads). */
  private void applyConfigMap(KeepalivedGroup group, SortedMap<String, String> configs) {
    ConfigMap desired = GroupObjects.configMap(group, configs);
    ConfigMap current = configMaps.get(new ResourceID(group.getMetadata().getName(),
        group.getMetadata().getNamespace())).orElse(null);
    Map<String, String> currentData = current == null || current.getData() == null ? Map.of() : current.getData();
    boolean same = current != null && currentData.equals(desired.getData())
        && current.getMetadata().getLabels() != null
        && current.getMetadata().getLabels().entrySet().containsAll(desired.getMetadata().getLabels().entrySet())
        && current.getMetadata().getOwnerReferences().stream()
            .anyMatch(r -> Objects.equals(r.getUid(), group.getMetadata().getUid()));
    if (same) {
      return;
    }
    if (current != null && current.getData() != null) {
      // Keys of nodes gone are dropped: apply a ConfigMap without them (ours, so server-side apply removes them).
      LOG.debug("ConfigMap {}/{} changes", group.getMetadata().getNamespace(), group.getMetadata().getName());
    }
    apply(desired);
    metrics.configWritten(group.getMetadata().getNamespace(), group.getMetadata().getName());
  }

  private void apply(HasMetadata desired) {
    client.resource(desired).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
  }

  private boolean podMonitorServed() {
    try {
      var resources = client.getApiResources("monitoring.coreos.com/v1");
      return resources != null && resources.getResources() != null
          && resources.getResources().stream().anyMatch(r -> "PodMonitor".equals(r.getKind()));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  private void applyPodMonitor(KeepalivedGroup group) {
    client.genericKubernetesResources("monitoring.coreos.com/v1", "PodMonitor")
        .inNamespace(group.getMetadata().getNamespace()).resource(GroupObjects.podMonitor(group))
        .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
  }

  /**
   * Deletion: the group's router ids and metrics port are retired for the grace, not released (its pods, until the
   * garbage collector removes them with the other owned objects, still run VRRP with those ids), then released by
   * {@link OrphanRouterIdReconciler}.
   */
  @Override
  public DeleteControl cleanup(KeepalivedGroup group, Context<KeepalivedGroup> context) {
    if (!routerIds.retireAll(RouterIds.owner(group.getMetadata().getNamespace(), group.getMetadata().getName(),
        group.getMetadata().getUid()))) {
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(1000); // a claim changed meanwhile: again
    }
    metrics.forget(group.getMetadata().getNamespace(), group.getMetadata().getName());
    LOG.info("KeepalivedGroup {} deleted: router ids and metrics port retired for {}", group.key(),
        settings.routerIdGrace());
    return DeleteControl.defaultDelete();
  }

}
