package org.ipamoperators.controller.common.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.lang.reflect.InvocationTargetException;

/**
 * A JSON merge patch sent as a single PATCH request. fabric8's {@code withName(n).patch(context, String)}
 * first GETs the whole object (only to learn its name and namespace, which the caller already knows):
 * one extra round trip and a full decode per write. Given an object that carries just the name and
 * namespace, fabric8 sends the PATCH alone.
 */
public final class MergePatch {
  private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);

  private MergePatch() {}

  /** Patches {@code type}'s object {@code namespace/name} (namespace null for cluster-scoped kinds); returns the answer. */
  public static <T extends HasMetadata> T apply(KubernetesClient client, Class<T> type, String namespace, String name,
      String json) {
    return target(client, type, namespace, name).patch(MERGE, json);
  }

  /** The same on the object's status subresource. */
  public static <T extends HasMetadata> T applyStatus(KubernetesClient client, Class<T> type, String namespace,
      String name, String json) {
    return target(client, type, namespace, name).subresource("status").patch(MERGE, json);
  }

  private static <T extends HasMetadata> Resource<T> target(KubernetesClient client, Class<T> type, String namespace,
      String name) {
    T skeleton;
    try {
      skeleton = type.getDeclaredConstructor().newInstance();
    } catch (InstantiationException | IllegalAccessException | NoSuchMethodException | InvocationTargetException e) {
      throw new IllegalArgumentException(type + " has no public no-argument constructor", e);
    }
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setNamespace(namespace);
    skeleton.setMetadata(meta);
    var op = client.resources(type);
    return namespace == null ? op.resource(skeleton) : op.inNamespace(namespace).resource(skeleton);
  }
}
