package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;

/**
 * The objects a group owns, all named after it in its namespace, labelled {@code keepalivedGroup=<name>} and
 * controlled by it (garbage-collected with it):
 *
 * <ul>
 *   <li>ConfigMap: one key per node, the node's keepalived.conf.
 *   <li>DaemonSet: host network, every taint tolerated, the group's nodeSelector. An init container
 *       ({@code config-setup}) copies the node's configuration to a pod-local file (resolving
 *       {@code interfaceFromIP}); {@code keepalived} runs with NET_ADMIN, NET_BROADCAST and NET_RAW; the
 *       {@code config-reloader} checks each new configuration with {@code keepalived --config-test} and sends
 *       SIGHUP only on a real change. The configuration is not part of the pod template: a change never restarts
 *       the pods.
 *   <li>PodMonitor (when the monitoring.coreos.com API is served): scrapes the pods' {@code metrics} port.
 * </ul>
 */
final class GroupObjects {
  static final String CONFIG_SOURCE_DIR = "/etc/keepalived/nodes";
  static final String CONFIG_FILE = "/run/keepalived/config/keepalived.conf";
  static final String PID_FILE = "/run/keepalived/pid/keepalived.pid";
  /** The first port of the default metrics-port range; each group gets one of its own ({@link MetricsPorts}). */
  static final int METRICS_PORT = 9650;

  private GroupObjects() {}

  static OwnerReference owner(KeepalivedGroup g) {
    return new OwnerReferenceBuilder().withApiVersion(g.getApiVersion()).withKind(g.getKind())
        .withName(g.getMetadata().getName()).withUid(g.getMetadata().getUid()).withController(true)
        .withBlockOwnerDeletion(true).build();
  }

  static Map<String, String> labels(KeepalivedGroup g) {
    return Map.of(KeepalivedAnnotations.GROUP_LABEL, g.getMetadata().getName());
  }

  static ConfigMap configMap(KeepalivedGroup g, SortedMap<String, String> configByNode) {
    return new ConfigMapBuilder().withNewMetadata().withName(g.getMetadata().getName())
        .withNamespace(g.getMetadata().getNamespace()).withLabels(labels(g)).withOwnerReferences(owner(g))
        .endMetadata().withData(new TreeMap<>(configByNode)).build();
  }

  static DaemonSet daemonSet(KeepalivedGroup g, KeepalivedSettings settings) {
    return daemonSet(g, settings, METRICS_PORT);
  }

  /**
   * @param metricsPort the group's own host port for {@code /metrics}, served on the pod's (the node's) address
   *     only, not on every interface; null for no metrics
   */
  static DaemonSet daemonSet(KeepalivedGroup g, KeepalivedSettings settings, Integer metricsPort) {
    KeepalivedGroupSpec spec = g.getSpec();
    String name = g.getMetadata().getName();
    List<Container> containers = containers(spec, settings, metricsPort);
    Map<String, String> podAnnotations = spec.daemonsetPodAnnotations() == null ? Map.of()
        : new TreeMap<>(spec.daemonsetPodAnnotations());
    Map<String, String> nodeSelector = spec.nodeSelector() == null ? Map.of() : new TreeMap<>(spec.nodeSelector());
    return new DaemonSetBuilder().withNewMetadata().withName(name).withNamespace(g.getMetadata().getNamespace())
        .withLabels(labels(g)).withOwnerReferences(owner(g)).endMetadata()
        .withNewSpec()
        .withNewSelector().withMatchLabels(labels(g)).endSelector()
        .withNewTemplate()
        .withNewMetadata().withLabels(labels(g)).withAnnotations(podAnnotations.isEmpty() ? null : podAnnotations)
        .endMetadata()
        .withNewSpec()
        .withHostNetwork(true).withDnsPolicy("ClusterFirstWithHostNet").withShareProcessNamespace(true)
        .withAutomountServiceAccountToken(false).withEnableServiceLinks(false)
        .withTerminationGracePeriodSeconds(5L)
        .withPriorityClassName(spec.daemonsetPodPriorityClassName())
        .withNodeSelector(nodeSelector.isEmpty() ? null : nodeSelector)
        .addNewToleration().withOperator("Exists").endToleration()
        .withInitContainers(containers.get(0)).withContainers(containers.subList(1, 3))
        .addNewVolume().withName("nodes").withNewConfigMap().withName(name).endConfigMap().endVolume()
        .addNewVolume().withName("config").withNewEmptyDir().endEmptyDir().endVolume()
        .addNewVolume().withName("pid").withNewEmptyDir().withMedium("Memory").endEmptyDir().endVolume()
        .endSpec()
        .endTemplate()
        .endSpec().build();
  }

  /** The init container config-setup, then keepalived and config-reloader. */
  private static List<Container> containers(KeepalivedGroupSpec spec, KeepalivedSettings settings,
      Integer metricsPort) {
    String image = spec.image() == null || spec.image().isBlank() ? settings.keepalivedImage() : spec.image().trim();
    List<String> reloaderArgs = reloaderArgs(spec);
    List<String> setupArgs = new ArrayList<>(reloaderArgs);
    setupArgs.add("--once");
    List<String> watchArgs = new ArrayList<>(reloaderArgs);
    watchArgs.add("--pid-file=" + PID_FILE);
    if (metricsPort != null) {
      watchArgs.add("--metrics-port=" + metricsPort);
      watchArgs.add("--bind-address=$(POD_IP)");
    }

    // The fieldRef's apiVersion is what the API server would default: a fieldRef is replaced whole by an apply, so
    // without it the DaemonSet would differ from what the server keeps, and be applied again on every reconcile.
    EnvVar nodeName = new EnvVarBuilder().withName("NODE_NAME").withNewValueFrom().withNewFieldRef()
        .withApiVersion("v1").withFieldPath("spec.nodeName").endFieldRef().endValueFrom().build();
    VolumeMount source = new VolumeMountBuilder().withName("nodes").withMountPath(CONFIG_SOURCE_DIR)
        .withReadOnly(true).build();
    VolumeMount config = new VolumeMountBuilder().withName("config").withMountPath("/run/keepalived/config").build();
    VolumeMount pid = new VolumeMountBuilder().withName("pid").withMountPath("/run/keepalived/pid").build();

    Container setup = new ContainerBuilder().withName("config-setup").withImage(settings.reloaderImage())
        .withCommand("ipam").withArgs(setupArgs).withEnv(nodeName).withVolumeMounts(source, config)
        .withNewSecurityContext().withRunAsUser(0L).endSecurityContext().build();
    Container keepalived = new ContainerBuilder().withName("keepalived").withImage(image)
        .withCommand("/usr/sbin/keepalived")
        .withArgs("--dont-fork", "--log-console", "--log-detail", "--use-file=" + CONFIG_FILE, "--pid=" + PID_FILE,
            "--vrrp_pid=/run/keepalived/pid/vrrp.pid", "--checkers_pid=/run/keepalived/pid/checkers.pid")
        .withVolumeMounts(config, pid)
        .withNewSecurityContext().withRunAsUser(0L).withNewCapabilities()
        .withAdd("NET_ADMIN", "NET_BROADCAST", "NET_RAW").endCapabilities().endSecurityContext().build();
    EnvVar podIp = new EnvVarBuilder().withName("POD_IP").withNewValueFrom().withNewFieldRef()
        .withApiVersion("v1").withFieldPath("status.podIP").endFieldRef().endValueFrom().build();
    ContainerBuilder reloaderBuilder = new ContainerBuilder().withName("config-reloader")
        .withImage(settings.reloaderImage()).withCommand("ipam").withArgs(watchArgs)
        .withEnv(metricsPort == null ? List.of(nodeName) : List.of(nodeName, podIp))
        .withVolumeMounts(source, config, pid)
        .withNewSecurityContext().withRunAsUser(0L).withNewCapabilities().withAdd("KILL").endCapabilities()
        .endSecurityContext();
    if (metricsPort != null) {
      reloaderBuilder.addNewPort().withName("metrics").withContainerPort(metricsPort).withProtocol("TCP").endPort();
    }
    return List.of(setup, keepalived, reloaderBuilder.build());
  }

  /** What config-setup and config-reloader share: where the node's configuration comes from and goes. */
  private static List<String> reloaderArgs(KeepalivedGroupSpec spec) {
    List<String> reloaderArgs = new ArrayList<>(List.of("keepalived-reloader",
        "--source=" + CONFIG_SOURCE_DIR + "/$(NODE_NAME)", "--target=" + CONFIG_FILE));
    if (spec.interfaceFromIP() != null) {
      reloaderArgs.add("--interface-from-ip=" + spec.interfaceFromIP().trim());
      reloaderArgs.add("--interface-placeholder=" + GroupSpecs.INTERFACE_PLACEHOLDER);
    }
    return reloaderArgs;
  }

  static GenericKubernetesResource podMonitor(KeepalivedGroup g) {
    GenericKubernetesResource pm = new GenericKubernetesResource();
    pm.setApiVersion("monitoring.coreos.com/v1");
    pm.setKind("PodMonitor");
    Map<String, String> labels = new TreeMap<>(labels(g));
    labels.put("metrics", "keepalived");
    pm.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(g.getMetadata().getName())
        .withNamespace(g.getMetadata().getNamespace()).withLabels(labels).withOwnerReferences(owner(g)).build());
    pm.setAdditionalProperty("spec", Map.of(
        "selector", Map.of("matchLabels", labels(g)),
        "podMetricsEndpoints", List.of(Map.of("port", "metrics", "path", "/metrics"))));
    return pm;
  }
}
