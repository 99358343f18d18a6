package org.ipamoperators.egressip.it;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBindingBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The API server refusing every update of one object, as an admission policy of a cluster would:
 * a ValidatingAdmissionPolicy and its binding, ready once a probe update is refused, gone (and
 * probed gone) on {@link #close}.
 */
final class WriteRefusal implements AutoCloseable {
  private final KubernetesClient client;
  private final String name;
  private final Consumer<KubernetesClient> probe;

  /**
   * @param group the object's API group ("" for the core group)
   * @param resource its plural resource name
   * @param object its name
   * @param probe an update of the object that the policy must refuse (and that changes nothing the test reads)
   */
  WriteRefusal(KubernetesClient client, String name, String group, String resource, String object,
      Consumer<KubernetesClient> probe) {
    this.client = client;
    this.name = name;
    this.probe = probe;
    ValidatingAdmissionPolicy policy = new ValidatingAdmissionPolicyBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().withFailurePolicy("Fail").withNewMatchConstraints().addNewResourceRule()
        .withApiGroups(group).withApiVersions("*").withOperations("UPDATE").withResources(resource)
        .endResourceRule().endMatchConstraints()
        .addNewValidation().withExpression("object.metadata.name != '" + object + "'")
        .withMessage("updates of " + resource + " " + object + " are refused by policy " + name).endValidation()
        .endSpec().build();
    ValidatingAdmissionPolicyBinding binding = new ValidatingAdmissionPolicyBindingBuilder().withNewMetadata()
        .withName(name).endMetadata().withNewSpec().withPolicyName(name).withValidationActions("Deny").endSpec()
        .build();
    client.admissionRegistration().v1().validatingAdmissionPolicies().resource(policy).create();
    client.admissionRegistration().v1().validatingAdmissionPolicyBindings().resource(binding).create();
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> !accepted());
  }

  private boolean accepted() {
    try {
      probe.accept(client);
      return true;
    } catch (KubernetesClientException e) {
      return false;
    }
  }

  @Override
  public void close() {
    client.admissionRegistration().v1().validatingAdmissionPolicyBindings().withName(name).delete();
    client.admissionRegistration().v1().validatingAdmissionPolicies().withName(name).delete();
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(this::accepted);
  }
}
