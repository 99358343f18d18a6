package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.Map;

/** Reading and writing the top-level spec and status fields of a legacy object held generically. */
final class LegacyFields {
  private LegacyFields() {}

  static String spec(GenericKubernetesResource r, String field) {
    return field(r, "spec", field);
  }

  static String status(GenericKubernetesResource r, String field) {
    return field(r, "status", field);
  }

  private static String field(GenericKubernetesResource r, String part, String field) {
    Object m = r.getAdditionalProperties().get(part);
    if (!(m instanceof Map<?, ?> map)) {
      return null;
    }
    Object v = map.get(field);
    return v == null ? null : v.toString();
  }

  @SuppressWarnings("unchecked")
  static void setStatus(GenericKubernetesResource r, String field, String value) {
    Object m = r.getAdditionalProperties().get("status");
    Map<String, Object> map;
    if (m instanceof Map<?, ?>) {
      map = (Map<String, Object>) m;
    } else {
      map = new java.util.LinkedHashMap<>();
      r.getAdditionalProperties().put("status", map);
    }
    if (value == null) {
      map.remove(field);
    } else {
      map.put(field, value);
    }
  }
}
