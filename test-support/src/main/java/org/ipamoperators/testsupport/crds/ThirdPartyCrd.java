package org.ipamoperators.testsupport.crds;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Arrays;
import java.util.List;

/**
 * Kinds owned by other projects that the controllers read or write, with CRDs of our own under
 * {@code crds/} on the classpath (written from the public API references, schemas included).
 */
public enum ThirdPartyCrd {

  /** OpenShift SDN per-node subnet and egress IPs; fields at the top level. */
  HOST_SUBNET("network.openshift.io", "v1", "HostSubnet", "hostsubnets", false),
  /** OpenShift SDN per-namespace network id and egress IPs; fields at the top level. */
  NET_NAMESPACE("network.openshift.io", "v1", "NetNamespace", "netnamespaces", false),
  /** OpenShift cluster infrastructure (platform type, infrastructure name); status subresource. */
  INFRASTRUCTURE("config.openshift.io", "v1", "Infrastructure", "infrastructures", false),
  /** OVN-Kubernetes egress IP; no status subresource, as upstream. */
  EGRESS_IP("k8s.ovn.org", "v1", "EgressIP", "egressips", false),
  /** Prometheus Operator pod scrape configuration. */
  POD_MONITOR("monitoring.coreos.com", "v1", "PodMonitor", "podmonitors", true),
  /** Prometheus Operator alerting and recording rules. */
  PROMETHEUS_RULE("monitoring.coreos.com", "v1", "PrometheusRule", "prometheusrules", true);

  private final String group;
  private final String version;
  private final String kind;
  private final String plural;
  private final boolean namespaced;

  ThirdPartyCrd(String group, String version, String kind, String plural, boolean namespaced) {
    this.group = group;
    this.version = version;
    this.kind = kind;
    this.plural = plural;
    this.namespaced = namespaced;
  }

  /** The CRD's name, e.g. {@code hostsubnets.network.openshift.io}. */
  public String crdName() {
    return plural + "." + group;
  }

  /** The classpath resource holding the CRD, e.g. {@code crds/hostsubnets.network.openshift.io.yaml}. */
  public String resource() {
    return "crds/" + crdName() + ".yaml";
  }

  public String group() {
    return group;
  }

  public String version() {
    return version;
  }

  public String kind() {
    return kind;
  }

  public String plural() {
    return plural;
  }

  public boolean namespaced() {
    return namespaced;
  }

  /** {@code group/version}, as objects of this kind carry it. */
  public String apiVersion() {
    return group + "/" + version;
  }

  /** What a client needs to address this kind without discovery. */
  public ResourceDefinitionContext context() {
    return new ResourceDefinitionContext.Builder()
        .withGroup(group)
        .withVersion(version)
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(namespaced)
        .build();
  }

  /** Generic access to objects of this kind. */
  public MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>>
      resources(KubernetesClient client) {
    return client.genericKubernetesResources(context());
  }

  /** The CRD as parsed from the classpath. */
  public CustomResourceDefinition definition() {
    return CrdInstaller.load(resource()).get(0);
  }

  /** Installs these CRDs and waits until each is Established. */
  public static void install(KubernetesClient client, ThirdPartyCrd... crds) {
    CrdInstaller.install(client, Arrays.stream(crds).map(ThirdPartyCrd::resource).toArray(String[]::new));
  }

  /** Installs every third-party CRD and waits until each is Established. */
  public static void installAll(KubernetesClient client) {
    install(client, values());
  }

  /** Every CRD of this enum, for instance to copy into a chart's test fixtures. */
  public static List<ThirdPartyCrd> all() {
    return List.of(values());
  }
}
