package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.util.HashMap;
import java.util.Map;

/**
 * An informer cache without what the controller never reads: {@code metadata.managedFields} and
 * kubectl's last-applied-configuration annotation, which together are often most of a cached
 * Service (java-operator-sdk's transforming item store; the object is changed as it is stored).
 */
public class LeanItemStore<R extends HasMetadata> extends TransformingItemStore<R> {
  static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  public LeanItemStore() {
    super(LeanItemStore::strip);
  }

  static <R extends HasMetadata> R strip(R r) {
    ObjectMeta m = r.getMetadata();
    if (m == null) {
      return r;
    }
    m.setManagedFields(null);
    Map<String, String> a = m.getAnnotations();
    if (a != null && a.containsKey(LAST_APPLIED)) {
      Map<String, String> rest = new HashMap<>(a);
      rest.remove(LAST_APPLIED);
      m.setAnnotations(rest);
    }
    return r;
  }
}
