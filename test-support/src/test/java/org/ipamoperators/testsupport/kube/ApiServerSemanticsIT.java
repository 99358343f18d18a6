package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The apiserver behaviours controllers depend on and fabric8's mock server does not reproduce. Each test fails
 * against the mock (CRUD mode) and passes against the real kube-apiserver.
 */
@KubeApiTest(crds = "crds/test/widgets.test.ipamoperators.org.yaml")
class ApiServerSemanticsIT {

  static final ResourceDefinitionContext WIDGETS = new ResourceDefinitionContext.Builder()
      .withGroup("test.ipamoperators.org").withVersion("v1").withKind("Widget").withPlural("widgets")
      .withNamespaced(true).build();

  @Test
  void schemaRejectsAnInvalidObjectWith422(KubernetesClient client) {
    GenericKubernetesResource invalid = widget("invalid", Map.of("cidr", "not-a-cidr", "size", 0, "mode", "Sometimes"));

    assertThatThrownBy(() -> widgets(client).resource(invalid).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getReason()).isEqualTo("Invalid");
          assertThat(e.getStatus().getDetails().getCauses()).extracting(StatusCause::getField)
              .contains("spec.cidr", "spec.size", "spec.mode");
        });
    assertThat(widgets(client).withName("invalid").get()).isNull();
  }

  @Test
  void schemaDefaultsAndPrunesUnknownFields(KubernetesClient client) {
    GenericKubernetesResource created = widgets(client)
        .resource(widget("pruned", Map.of("cidr", "192.0.2.0/24", "size", 4, "colour", "blue"))).create();

    assertThat(spec(created)).containsEntry("mode", "Dynamic").doesNotContainKey("colour");
  }

  @Test
  void updateWithStaleResourceVersionGets409AndNoOpUpdateKeepsVersion(KubernetesClient client) {
    widgets(client).resource(widget("locked", Map.of("cidr", "192.0.2.0/24", "size", 4))).create();
    GenericKubernetesResource first = widgets(client).withName("locked").get();
    GenericKubernetesResource second = widgets(client).withName("locked").get();

    // A write that changes nothing is not a new version (controllers rely on this to avoid event storms).
    GenericKubernetesResource unchanged = widgets(client).resource(first).update();
    assertThat(unchanged.getMetadata().getResourceVersion()).isEqualTo(first.getMetadata().getResourceVersion());

    spec(first).put("size", 8);
    GenericKubernetesResource updated = widgets(client).resource(first).update();
    assertThat(updated.getMetadata().getResourceVersion()).isNotEqualTo(second.getMetadata().getResourceVersion());

    spec(second).put("size", 16);
    assertThatThrownBy(() -> widgets(client).resource(second).update())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(409);
          assertThat(e.getStatus().getReason()).isEqualTo("Conflict");
        });
    assertThat(spec(widgets(client).withName("locked").get())).containsEntry("size", 8);
  }

  @Test
  void statusSubresourceAndMainResourceEachIgnoreTheOtherHalf(KubernetesClient client) {
    GenericKubernetesResource draft = widget("split", Map.of("cidr", "192.0.2.0/24", "size", 4));
    draft.setAdditionalProperty("status", Map.of("phase", "Invented"));
    GenericKubernetesResource created = widgets(client).resource(draft).create();
    assertThat(created.<Object>get("status", "phase")).as("status is ignored on create").isNull();
    assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);

    // A status write that also changes spec: only status is stored, generation stays.
    GenericKubernetesResource statusWrite = widgets(client).withName("split").get();
    statusWrite.setAdditionalProperty("status", Map.of("phase", "Ready", "allocated", List.of("192.0.2.1")));
    spec(statusWrite).put("size", 99);
    GenericKubernetesResource afterStatus = widgets(client).resource(statusWrite).updateStatus();
    assertThat(spec(afterStatus)).containsEntry("size", 4);
    assertThat(afterStatus.<Object>get("status", "phase")).isEqualTo("Ready");
    assertThat(afterStatus.getMetadata().getGeneration()).isEqualTo(1L);

    // A main write that also changes status: only spec is stored, generation is bumped.
    GenericKubernetesResource mainWrite = widgets(client).withName("split").get();
    spec(mainWrite).put("size", 8);
    mainWrite.setAdditionalProperty("status", Map.of("phase", "Overwritten"));
    GenericKubernetesResource afterMain = widgets(client).resource(mainWrite).update();
    assertThat(spec(afterMain)).containsEntry("size", 8);
    assertThat(afterMain.<Object>get("status", "phase")).isEqualTo("Ready");
    assertThat(afterMain.getMetadata().getGeneration()).isEqualTo(2L);
  }

  @Test
  void finalizerKeepsADeletedObjectUntilItIsRemoved(KubernetesClient client) {
    GenericKubernetesResource draft = widget("held", Map.of("cidr", "192.0.2.0/24", "size", 4));
    draft.getMetadata().setFinalizers(List.of("ipam-operators.org/release-addresses"));
    widgets(client).resource(draft).create();

    widgets(client).withName("held").delete();

    GenericKubernetesResource terminating = widgets(client).withName("held").get();
    assertThat(terminating).isNotNull();
    assertThat(terminating.getMetadata().getDeletionTimestamp()).isNotBlank();
    assertThat(terminating.getMetadata().getFinalizers()).containsExactly("ipam-operators.org/release-addresses");

    // While terminating, no new finalizers may be added.
    terminating.getMetadata().setFinalizers(List.of("ipam-operators.org/release-addresses", "other/finalizer"));
    assertThatThrownBy(() -> widgets(client).resource(terminating).update())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));

    GenericKubernetesResource release = widgets(client).withName("held").get();
    release.getMetadata().setFinalizers(List.of());
    widgets(client).resource(release).update();

    assertThat(widgets(client).withName("held").get()).isNull();
  }

  @Test
  void serverSideApplyFromTwoManagersConflictsUnlessForced(KubernetesClient client) {
    widgets(client).resource(widget("shared", Map.of("cidr", "192.0.2.0/24", "size", 4)))
        .fieldManager("controller-a").serverSideApply();

    GenericKubernetesResource fromB = widget("shared", Map.of("cidr", "192.0.2.0/24", "size", 8));
    assertThatThrownBy(() -> widgets(client).resource(fromB).fieldManager("controller-b").serverSideApply())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(409);
          assertThat(e.getMessage()).contains("controller-a").contains(".spec.size");
        });
    assertThat(spec(widgets(client).withName("shared").get())).containsEntry("size", 4);

    GenericKubernetesResource forced = widgets(client).resource(fromB).fieldManager("controller-b")
        .forceConflicts().serverSideApply();
    assertThat(spec(forced)).containsEntry("size", 8);
    assertThat(forced.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getManager)
        .contains("controller-b");

    // Applying the same value is not a conflict, even from another manager: both then co-own the field.
    GenericKubernetesResource sameFromA = widget("shared", Map.of("cidr", "192.0.2.0/24", "size", 8));
    widgets(client).resource(sameFromA).fieldManager("controller-a").serverSideApply();
  }

  static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>>
      widgets(KubernetesClient client) {
    return client.genericKubernetesResources(WIDGETS);
  }

  static GenericKubernetesResource widget(String name, Map<String, Object> spec) {
    GenericKubernetesResource widget = new GenericKubernetesResourceBuilder()
        .withApiVersion("test.ipamoperators.org/v1")
        .withKind("Widget")
        .withNewMetadata().withName(name).endMetadata()
        .build();
    widget.setAdditionalProperty("spec", new java.util.LinkedHashMap<>(spec));
    return widget;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> spec(GenericKubernetesResource resource) {
    return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
  }
}
