package org.ipamoperators.testsupport.corpus;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * java-operator-sdk metrics that remember every reconcile that threw, by {@code Kind/name} (the first exception
 * of each): give it to the Operator ({@code withMetrics}) and check {@link #byObject()} is empty.
 */
public final class ReconcileFailures implements Metrics {
  private final Map<String, String> byObject = new ConcurrentHashMap<>();

  @Override
  public void failedReconciliation(HasMetadata resource, Exception exception, Map<String, Object> metadata) {
    byObject.merge(resource.getKind() + "/" + resource.getMetadata().getName(), exception.toString(), (a, b) -> a);
  }

  /** Live view: object to the first exception its reconcile threw. */
  public Map<String, String> byObject() {
    return byObject;
  }
}
