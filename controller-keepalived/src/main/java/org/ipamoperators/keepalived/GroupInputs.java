package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelector;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.kube.LabelSelectors;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.keepalived.config.KeepalivedNode;

/**
 * What a group's reconcile reads, all from the event sources' caches: its nodes, the Services naming it, the
 * namespaces allowed to, the configurations every group renders and the PodMonitor CRD. Also which groups each
 * change concerns. The ConfigMap and DaemonSet informers are those of the group's dependents too
 * ({@link GroupDependents}): the ConfigMaps' also wakes the groups waiting for a VIP another group lets go, and the
 * DaemonSets' ignores status-only updates, which JOSDK's default informer of a dependent would not.
 */
final class GroupInputs {
  /** The informers the ConfigMap and DaemonSet dependents use ({@code useEventSourceWithName}). */
  static final String CONFIG_MAPS = "keepalived-configmaps";
  static final String DAEMON_SETS = "keepalived-daemonsets";
  private final IndexedResourceCache<KeepalivedGroup> groups;
  private final RenderedElsewhere rendered = new RenderedElsewhere();
  private final InformerEventSource<Service, KeepalivedGroup> services;
  private final InformerEventSource<Node, KeepalivedGroup> nodes;
  private final InformerEventSource<Namespace, KeepalivedGroup> namespaces;
  private final InformerEventSource<ConfigMap, KeepalivedGroup> configMaps;
  private final InformerEventSource<CustomResourceDefinition, KeepalivedGroup> crds;
  private final List<EventSource<?, KeepalivedGroup>> eventSources;

  GroupInputs(EventSourceContext<KeepalivedGroup> context, EventSource<?, KeepalivedGroup> passwordSecrets) {
    groups = context.getPrimaryCache();
    // A Service event concerns the group its annotation names and every group that announced it before (the
    // annotation may have changed or gone).
    services = new InformerEventSource<>(InformerEventSourceConfiguration.from(Service.class, KeepalivedGroup.class)
        .withSecondaryToPrimaryMapper(this::groupsOf).build(), context);
    nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, KeepalivedGroup.class)
        .withOnUpdateFilter(GroupNodes::relevantChange)
        .withSecondaryToPrimaryMapper(n -> groups(g -> true)).build(), context);
    namespaces = new InformerEventSource<>(InformerEventSourceConfiguration.from(Namespace.class, KeepalivedGroup.class)
        .withOnUpdateFilter((n, o) -> !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels()))
        .withSecondaryToPrimaryMapper(n -> groups(g -> g.getSpec() != null
            && g.getSpec().namespaceSelector() != null)).build(), context);
    // Owned objects, and the event sources of their dependents (GroupDependents): an edit or deletion by hand is
    // repaired at once.
    configMaps = new InformerEventSource<>(InformerEventSourceConfiguration.from(ConfigMap.class, KeepalivedGroup.class)
        .withName(CONFIG_MAPS).withLabelSelector(KeepalivedAnnotations.GROUP_LABEL)
        .withSecondaryToPrimaryMapper(this::groupsOfConfigMap).build(), context);
    InformerEventSource<DaemonSet, KeepalivedGroup> daemonSets = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(DaemonSet.class, KeepalivedGroup.class)
            .withName(DAEMON_SETS).withLabelSelector(KeepalivedAnnotations.GROUP_LABEL)
            .withOnUpdateFilter((n, o) -> !Objects.equals(n.getSpec(), o.getSpec())
                || !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels()))
            .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(KeepalivedGroup.class)).build(), context);
    // The PodMonitor API appearing (or going) is noticed at once, not only at start.
    crds = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(CustomResourceDefinition.class, KeepalivedGroup.class)
            .withFieldSelector(new FieldSelector(new FieldSelector.Field("metadata.name", PodMonitorApi.CRD)))
            .withSecondaryToPrimaryMapper(c -> groups(g -> true)).build(), context);
    // A router id claim deleted by hand is re-claimed by its group; an id released may serve exhausted groups.
    InformerEventSource<IDClaim, KeepalivedGroup> claims = new InformerEventSource<>(
        InformerEventSourceConfiguration.from(IDClaim.class, KeepalivedGroup.class)
            .withOnAddFilter(c -> false).withOnUpdateFilter((n, o) -> false)
            .withSecondaryToPrimaryMapper(this::groupsOfClaim).build(), context);
    eventSources = List.of(services, nodes, passwordSecrets, namespaces, configMaps, daemonSets, crds, claims);
  }

  List<EventSource<?, KeepalivedGroup>> eventSources() {
    return eventSources;
  }

  /** The group's nodes, by name. */
  List<KeepalivedNode> nodes(KeepalivedGroupSpec spec) {
    boolean fromIp = spec.interfaceFromIP() != null;
    return nodes.list(n -> GroupNodes.selected(n, spec.nodeSelector()))
        .map(n -> GroupNodes.toKeepalived(n, fromIp)).sorted(Comparator.comparing(KeepalivedNode::name)).toList();
  }

  /** The Services that name the group, are eligible and are not being deleted. */
  List<Service> services(String groupKey) {
    return services.list(s -> AttachedService.groupKey(s).filter(groupKey::equals).isPresent()
        && AttachedService.eligible(s) && s.getMetadata().getDeletionTimestamp() == null).toList();
  }

  /** Whether the group's namespaceSelector (if any) lets {@code namespace} attach VIPs to it. */
  boolean namespaceAllowed(KeepalivedGroupSpec spec, String namespace) {
    if (spec.namespaceSelector() == null) {
      return true;
    }
    Namespace ns = namespaces.get(new ResourceID(namespace)).orElse(null);
    Map<String, String> labels = ns == null || ns.getMetadata().getLabels() == null ? Map.of()
        : ns.getMetadata().getLabels();
    return LabelSelectors.matches(spec.namespaceSelector(), labels);
  }

  /**
   * The VIPs the groups' configurations render, as the hand-over needs them. The configuration of a group that is
   * gone counts no more (its pods go with it; its ConfigMap may linger until the garbage collector removes it).
   */
  RenderedElsewhere.View rendered(KeepalivedGroup group) {
    return rendered.view(configMaps.list(cm -> groups.get(
        new ResourceID(cm.getMetadata().getName(), cm.getMetadata().getNamespace())).isPresent()).toList(),
        group.getMetadata().getNamespace(), group.getMetadata().getName());
  }

  Optional<CustomResourceDefinition> podMonitorCrd() {
    return crds.get(new ResourceID(PodMonitorApi.CRD));
  }

  private Set<ResourceID> groups(Predicate<KeepalivedGroup> which) {
    return groups.list(which).map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private Set<ResourceID> groupsOf(Service s) {
    Set<ResourceID> ids = new HashSet<>();
    AttachedService.groupKey(s).ifPresent(k -> {
      int slash = k.indexOf('/');
      ids.add(new ResourceID(k.substring(slash + 1), k.substring(0, slash)));
    });
    String key = AttachedService.key(s);
    ids.addAll(groups(g -> g.getStatus() != null && g.getStatus().services() != null
        && g.getStatus().services().contains(key)));
    return ids;
  }

  /** Its group, and the groups with Services not (fully) announced: they may wait for a VIP this one let go. */
  private Set<ResourceID> groupsOfConfigMap(ConfigMap cm) {
    Set<ResourceID> ids = new HashSet<>(Mappers.fromOwnerReferences(KeepalivedGroup.class).toPrimaryResourceIDs(cm));
    ids.addAll(groups(g -> "True".equals(GroupReport.condition(g, GroupReport.COND_SERVICE_PROBLEMS))));
    return ids;
  }

  private Set<ResourceID> groupsOfClaim(IDClaim c) {
    Set<ResourceID> ids = new HashSet<>(groups(g -> "True".equals(GroupReport.condition(g,
        GroupReport.COND_EXHAUSTED))));
    ClaimOwner o = c.getSpec() == null ? null : c.getSpec().owner();
    if (o != null && RouterIds.CONTROLLER.equals(o.controller()) && o.namespace() != null) {
      ids.add(new ResourceID(o.name(), o.namespace()));
    }
    return ids;
  }
}
