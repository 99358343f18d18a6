package org.ipamoperators.testsupport.crds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Our third-party CRDs install on a real apiserver, accept a realistic object each, and keep its fields. */
@KubeApiTest(thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE,
    ThirdPartyCrd.EGRESS_IP, ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.PROMETHEUS_RULE})
class ThirdPartyCrdsIT {

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @ParameterizedTest
  @EnumSource(ThirdPartyCrd.class)
  void isEstablishedAndAcceptsASampleKeepingItsFieldsAndPruningOthers(ThirdPartyCrd crd, KubernetesClient client) {
    CustomResourceDefinition installed = client.apiextensions().v1().customResourceDefinitions()
        .withName(crd.crdName()).get();
    assertThat(installed.getStatus().getConditions())
        .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Established=True"));
    assertThat(installed.getStatus().getAcceptedNames().getKind()).isEqualTo(crd.kind());

    GenericKubernetesResource sample = sample(crd);
    Map<String, Object> expected = withoutMetadata(sample);
    sample.setAdditionalProperty("notInTheSchema", "dropped");

    GenericKubernetesResource created = crd.resources(client).resource(sample).create();

    assertThat(created.getMetadata().getUid()).isNotBlank();
    assertThat(created.getMetadata().getNamespace()).isEqualTo(crd.namespaced() ? client.getNamespace() : null);
    // Every field of the sample survives (the schema declares or preserves it); an unknown one is pruned.
    Map<String, Object> actual = withoutMetadata(crd.resources(client).withName(sample.getMetadata().getName()).get());
    assertThat(actual).isEqualTo(expected);
  }

  @Test
  void hostSubnetFieldsAreTopLevelAndValidatedAsIpv4(KubernetesClient client) {
    GenericKubernetesResource subnet = sample(ThirdPartyCrd.HOST_SUBNET);
    subnet.setAdditionalProperty("hostIP", "2001:db8::10");
    subnet.setAdditionalProperty("subnet", "10.128.2.0/33");
    subnet.getAdditionalProperties().remove("host");

    assertThatThrownBy(() -> ThirdPartyCrd.HOST_SUBNET.resources(client).resource(subnet).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getDetails().getCauses()).extracting(StatusCause::getField)
              .contains("hostIP", "subnet", "host");
        });
  }

  @Test
  void netNamespaceIdIsA24BitVnid(KubernetesClient client) {
    GenericKubernetesResource netns = sample(ThirdPartyCrd.NET_NAMESPACE);
    netns.setAdditionalProperty("netid", 16_777_216);

    assertThatThrownBy(() -> ThirdPartyCrd.NET_NAMESPACE.resources(client).resource(netns).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
  }

  @Test
  void infrastructureStatusIsASubresource(KubernetesClient client) {
    var infrastructures = ThirdPartyCrd.INFRASTRUCTURE.resources(client);
    GenericKubernetesResource draft = sample(ThirdPartyCrd.INFRASTRUCTURE);
    draft.setAdditionalProperty("status", Map.of("infrastructureName", "ignored"));
    GenericKubernetesResource created = infrastructures.resource(draft).create();
    assertThat(created.<Object>get("status", "infrastructureName")).as("status is dropped on create").isNull();

    GenericKubernetesResource infra = infrastructures.withName("cluster").get();
    infra.setAdditionalProperty("status", Map.of(
        "infrastructureName", "test-7xk2p",
        "platform", "AWS",
        "platformStatus", Map.of("type", "AWS", "aws", Map.of("region", "us-east-1"))));
    infrastructures.resource(infra).updateStatus();

    GenericKubernetesResource read = infrastructures.withName("cluster").get();
    assertThat(read.<Object>get("status", "platformStatus", "type")).isEqualTo("AWS");
    assertThat(read.<Object>get("status", "platformStatus", "aws", "region")).isEqualTo("us-east-1");
    assertThat(read.<Object>get("status", "infrastructureName")).isEqualTo("test-7xk2p");
  }

  @Test
  void egressIpStatusIsWrittenWithTheObjectAsUpstreamAndIsTyped(KubernetesClient client) {
    GenericKubernetesResource draft = sample(ThirdPartyCrd.EGRESS_IP);
    draft.setAdditionalProperty("status", Map.of("items",
        List.of(Map.of("node", "worker-0", "egressIP", "192.0.2.100", "unknownField", "pruned"))));

    GenericKubernetesResource created = ThirdPartyCrd.EGRESS_IP.resources(client).resource(draft).create();

    assertThat(created.<Object>get("status", "items")).as("no status subresource: status kept on create")
        .isEqualTo(List.of(Map.of("node", "worker-0", "egressIP", "192.0.2.100")));
  }

  @Test
  void prometheusRuleNeedsExactlyOneOfAlertAndRecord(KubernetesClient client) {
    GenericKubernetesResource rule = sample(ThirdPartyCrd.PROMETHEUS_RULE);
    rule.setAdditionalProperty("spec", Map.of("groups", List.of(Map.of("name", "g", "rules",
        List.of(Map.of("expr", "up == 0"))))));

    assertThatThrownBy(() -> ThirdPartyCrd.PROMETHEUS_RULE.resources(client).resource(rule).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
  }

  static GenericKubernetesResource sample(ThirdPartyCrd crd) {
    try (InputStream in = ThirdPartyCrdsIT.class.getResourceAsStream("/samples/" + crd.crdName() + ".yaml")) {
      GenericKubernetesResource sample = SERIALIZATION.unmarshal(in, GenericKubernetesResource.class);
      assertThat(sample.getApiVersion()).isEqualTo(crd.apiVersion());
      assertThat(sample.getKind()).isEqualTo(crd.kind());
      return sample;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> withoutMetadata(GenericKubernetesResource resource) {
    Map<String, Object> map = SERIALIZATION.convertValue(resource, Map.class);
    map.remove("metadata");
    return map;
  }
}
