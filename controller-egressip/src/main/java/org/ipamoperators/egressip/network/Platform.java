package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Map;
import java.util.Set;

/**
 * The infrastructure a cluster runs on, from OpenShift's {@code Infrastructure/cluster}
 * ({@code status.platformStatus.type}, else the older {@code status.platform}; on AWS also
 * {@code status.platformStatus.aws.region}), or "None" where that
 * API is not served (plain Kubernetes). {@code attributes} are the text fields of the platform's own
 * part of the status ({@code status.platformStatus.<type>}, such as {@code azure.resourceGroupName}),
 * passed to NodeNetwork providers without this class knowing their meaning. Read on every
 * reconcile, never only once at start, so a cluster whose Infrastructure appears later is followed.
 *
 * <p>An API error is never read as "no cloud": on AWS that would switch a pass to egressCIDRs mode
 * and make cleanup release claims without detaching them from the interfaces. {@link #detect}
 * throws; {@link Known} keeps the last platform it saw and answers with it while the API fails.
 */
public record Platform(String type, boolean fromInfrastructure, String awsRegion, Map<String, String> attributes) {
  /** Platforms where the cluster network alone carries an egress IP: no cloud API is needed. */
  private static final Set<String> WITHOUT_CLOUD_API = Set.of("", "None", "BareMetal", "VSphere", "oVirt",
      "OpenStack", "Libvirt", "KubeVirt", "EquinixMetal", "Nutanix", "External");
  static final ResourceDefinitionContext INFRASTRUCTURE = new ResourceDefinitionContext.Builder()
      .withGroup("config.openshift.io").withVersion("v1").withKind("Infrastructure")
      .withPlural("infrastructures").withNamespaced(false).build();

  public Platform {
    attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
  }

  public Platform(String type, boolean fromInfrastructure, String awsRegion) {
    this(type, fromInfrastructure, awsRegion, Map.of());
  }

  /** True where addresses must also be attached through a cloud API (AWS, Azure, GCP...). */
  public boolean needsCloudApi() {
    return !WITHOUT_CLOUD_API.contains(type);
  }

  /** Finds the platform; {@code override} (a setting on non-OpenShift clusters) wins when given. */
  public static Platform detect(KubernetesClient client, String override) {
    if (override != null && !override.isBlank()) {
      return new Platform(override, false, null);
    }
    try {
      if (!client.supports("config.openshift.io/v1", "Infrastructure")) {
        return new Platform("None", false, null);
      }
      GenericKubernetesResource infra = client.genericKubernetesResources(INFRASTRUCTURE).withName("cluster").get();
      if (infra == null) {
        return new Platform("None", false, null);
      }
      Object status = infra.getAdditionalProperties().get("status");
      if (status instanceof Map<?, ?> st) {
        String region = st.get("platformStatus") instanceof Map<?, ?> ps && ps.get("aws") instanceof Map<?, ?> aws
            && aws.get("region") instanceof String r && !r.isBlank() ? r : null;
        if (st.get("platformStatus") instanceof Map<?, ?> ps && ps.get("type") instanceof String t && !t.isBlank()) {
          return new Platform(t, true, region, attributes(ps, t));
        }
        if (st.get("platform") instanceof String p && !p.isBlank()) {
          return new Platform(p, true, region);
        }
      }
      return new Platform("None", true, null);
    } catch (KubernetesClientException e) {
      throw new KubernetesClientException("cannot read Infrastructure/cluster to find the platform: "
          + e.getMessage(), e.getCode(), e.getStatus());
    }
  }

  /**
   * The platform as last read: an error keeps the previous answer (a platform does not change on
   * a flaky call), and with no previous answer the error propagates, so the reconcile is retried
   * rather than run as bare metal.
   */
  public static final class Known {
    private final KubernetesClient client;
    private final String override;
    private volatile Platform last;

    public Known(KubernetesClient client, String override) {
      this.client = client;
      this.override = override;
    }

    public Platform current() {
      try {
        Platform p = detect(client, override);
        last = p;
        return p;
      } catch (KubernetesClientException e) {
        Platform previous = last;
        if (previous == null) {
          throw e;
        }
        return previous;
      }
    }
  }

  /** The text fields of {@code platformStatus.<type>} (the key is the type in any case, such as aws, azure). */
  private static Map<String, String> attributes(Map<?, ?> platformStatus, String type) {
    Map<String, String> out = new java.util.HashMap<>();
    platformStatus.forEach((k, v) -> {
      if (k instanceof String key && key.equalsIgnoreCase(type) && v instanceof Map<?, ?> own) {
        own.forEach((ak, av) -> {
          if (ak instanceof String a && av instanceof String value && !value.isBlank()) {
            out.put(a, value);
          }
        });
      }
    });
    return out;
  }
}
