package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.function.BooleanSupplier;
import org.ipamoperators.keepalived.api.KeepalivedGroup;

/**
 * Writes a group's objects with server-side apply, in this order: the ConfigMap (only when its content differs from
 * what the cache shows, so the pods reload nothing needlessly), the DaemonSet, then the PodMonitor when the group
 * has a metrics port and the API serves PodMonitors. A refused write is a {@code KubernetesClientException} for the
 * caller; nothing after it is written.
 */
final class GroupApplier {
  static final String FIELD_MANAGER = "ipam-keepalived";

  private final KubernetesClient client;
  private final KeepalivedSettings settings;
  private final KeepalivedMetrics metrics;

  GroupApplier(KubernetesClient client, KeepalivedSettings settings, KeepalivedMetrics metrics) {
    this.client = client;
    this.settings = settings;
    this.metrics = metrics;
  }

  /**
   * @param current the group's ConfigMap as the informer shows it
   * @param podMonitorServed asked only for a group with a metrics port
   * @return whether the PodMonitor was applied
   */
  boolean apply(KeepalivedGroup group, SortedMap<String, String> configs, Optional<ConfigMap> current,
      Integer metricsPort, BooleanSupplier podMonitorServed) {
    applyConfigMap(group, configs, current.orElse(null));
    apply(GroupObjects.daemonSet(group, settings, metricsPort));
    boolean podMonitor = metricsPort != null && podMonitorServed.getAsBoolean();
    if (podMonitor) {
      client.genericKubernetesResources(PodMonitorApi.API_VERSION, "PodMonitor")
          .inNamespace(group.getMetadata().getNamespace()).resource(GroupObjects.podMonitor(group))
          .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
    }
    return podMonitor;
  }

  private void applyConfigMap(KeepalivedGroup group, SortedMap<String, String> configs, ConfigMap current) {
    ConfigMap desired = GroupObjects.configMap(group, configs);
    Map<String, String> currentData = current == null || current.getData() == null ? Map.of() : current.getData();
    boolean same = current != null && currentData.equals(desired.getData())
        && current.getMetadata().getLabels() != null
        && current.getMetadata().getLabels().entrySet().containsAll(desired.getMetadata().getLabels().entrySet())
        && current.getMetadata().getOwnerReferences().stream()
            .anyMatch(r -> Objects.equals(r.getUid(), group.getMetadata().getUid()));
    if (same) {
      return;
    }
    // Keys of nodes gone are dropped: the ConfigMap is ours, so applying it without them removes them.
    apply(desired);
    metrics.configWritten(group.getMetadata().getNamespace(), group.getMetadata().getName());
  }

  private void apply(HasMetadata desired) {
    client.resource(desired).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
  }
}
