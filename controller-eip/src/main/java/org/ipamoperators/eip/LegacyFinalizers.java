package org.ipamoperators.eip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import org.ipamoperators.eip.api.EipNames;

/**
 * The old operator's pod and node finalizers. This operator adds none (an uninstalled operator never blocks a pod
 * or node deletion); those it finds are removed with a JSON patch guarded by a test of the list, so a finalizer
 * another controller adds meanwhile is never lost.
 */
final class LegacyFinalizers {
  private LegacyFinalizers() {}

  static void removeFromPod(KubernetesClient client, Pod pod) {
    remove(client, pod, EipNames.LEGACY_POD_FINALIZERS);
  }

  static void removeFromNode(KubernetesClient client, io.fabric8.kubernetes.api.model.Node node) {
    remove(client, node, List.of(EipNames.LEGACY_NODE_FINALIZER));
  }

  private static void remove(KubernetesClient client, HasMetadata o, List<String> legacy) {
    List<String> finalizers = o.getMetadata().getFinalizers();
    if (finalizers == null || finalizers.stream().noneMatch(legacy::contains)) {
      return;
    }
    StringBuilder patch = new StringBuilder("[");
    // Highest index first, each guarded by a test, so indices stay valid and a changed list fails the patch.
    for (int i = finalizers.size() - 1; i >= 0; i--) {
      if (legacy.contains(finalizers.get(i))) {
        if (patch.length() > 1) {
          patch.append(',');
        }
        patch.append("{\"op\":\"test\",\"path\":\"/metadata/finalizers/").append(i).append("\",\"value\":\"")
            .append(finalizers.get(i)).append("\"},{\"op\":\"remove\",\"path\":\"/metadata/finalizers/")
            .append(i).append("\"}");
      }
    }
    patch.append(']');
    try {
      if (o instanceof Pod) {
        client.pods().inNamespace(o.getMetadata().getNamespace()).withName(o.getMetadata().getName())
            .patch(PatchContext.of(PatchType.JSON), patch.toString());
      } else {
        client.nodes().withName(o.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON), patch.toString());
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 422 && e.getCode() != 409) {
        throw e;
      }
      // gone, or changed meanwhile: the next event tries again
    }
  }
}
