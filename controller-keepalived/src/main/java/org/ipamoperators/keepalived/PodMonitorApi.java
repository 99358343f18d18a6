package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Whether the API server serves PodMonitors (monitoring.coreos.com/v1). Discovery is asked once per version of the
 * PodMonitor CRD the informer shows (a CRD created, established, changed or deleted is asked about at once), and
 * again after {@code refresh}; a CRD being deleted counts as not served.
 */
final class PodMonitorApi {
  static final String CRD = "podmonitors.monitoring.coreos.com";
  static final String API_VERSION = "monitoring.coreos.com/v1";

  private record Answer(String crd, boolean served, Instant at) {}

  private final BooleanSupplier discovery;
  private final Duration refresh;
  private final Clock clock;
  private final AtomicReference<Answer> last = new AtomicReference<>();

  PodMonitorApi(KubernetesClient client, Duration refresh) {
    this(() -> served(client), refresh, Clock.systemUTC());
  }

  PodMonitorApi(BooleanSupplier discovery, Duration refresh, Clock clock) {
    this.discovery = discovery;
    this.refresh = refresh;
    this.clock = clock;
  }

  /** @param crd the PodMonitor CRD as the informer shows it, if any */
  boolean served(Optional<CustomResourceDefinition> crd) {
    if (crd.isPresent() && crd.get().getMetadata().getDeletionTimestamp() != null) {
      // Terminating: discovery may still list PodMonitors, but the API server refuses to create them.
      return false;
    }
    String version = crd.map(c -> c.getMetadata().getUid() + "/" + c.getMetadata().getResourceVersion())
        .orElse("none");
    Instant now = clock.instant();
    Answer a = last.get();
    if (a != null && a.crd().equals(version) && now.isBefore(a.at().plus(refresh))) {
      return a.served();
    }
    boolean served = discovery.getAsBoolean();
    // Remembered only when it agrees with the CRD: one that is there but not served yet (not established), or
    // served still though its CRD is gone, is a passing state, asked about again on the next call.
    last.set(served == crd.isPresent() ? new Answer(version, served, now) : null);
    return served;
  }

  private static boolean served(KubernetesClient client) {
    try {
      var resources = client.getApiResources(API_VERSION);
      return resources != null && resources.getResources() != null
          && resources.getResources().stream().anyMatch(r -> "PodMonitor".equals(r.getKind()));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }
}
