package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.List;
import java.util.UUID;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;

/** Which updates of a Service are only this process's own status write coming back. */
class OwnStatusWritesTest {
  private final OwnStatusWrites writes = new OwnStatusWrites();

  private static Condition condition(String status, String message) {
    return new ConditionBuilder().withType(VipAnnotations.CONDITION).withStatus(status).withReason("Assigned")
        .withMessage(message).build();
  }

  private static Service service(String uid, int port, List<String> ingress, Condition c) {
    ServiceBuilder b = new ServiceBuilder().withNewMetadata().withName("s").withNamespace("ns").withUid(uid)
        .withResourceVersion(Integer.toString(port + ingress.size())).endMetadata()
        .withNewSpec().withType("LoadBalancer").addNewPort().withPort(port).endPort().endSpec();
    Service s = b.build();
    if (c != null) {
      s = new ServiceBuilder(s).withNewStatus().withNewLoadBalancer()
          .withIngress(ingress.stream().map(ip -> new io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder()
              .withIp(ip).build()).toList()).endLoadBalancer().withConditions(c).endStatus().build();
    }
    return s;
  }

  @Test
  void theEchoOfAWriteThatLeftTheServiceServedIsSkippedOnce() {
    String uid = UUID.randomUUID().toString();
    Service before = service(uid, 80, List.of(), null);
    Condition c = condition("True", "192.0.2.1");
    writes.writing(before, List.of("192.0.2.1"), c);
    Service now = service(uid, 80, List.of("192.0.2.1"), c);
    assertThat(writes.isEcho(now, before)).isTrue();
    assertThat(writes.isEcho(now, before)).as("consumed").isFalse();
  }

  @Test
  void anyOtherChangeIsNotAnEcho() {
    String uid = UUID.randomUUID().toString();
    Service before = service(uid, 80, List.of(), null);
    Condition c = condition("True", "192.0.2.1");
    writes.writing(before, List.of("192.0.2.1"), c);
    assertThat(writes.isEcho(service(uid, 81, List.of("192.0.2.1"), c), before)).as("spec changed").isFalse();
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.2"), c), before)).as("other ingress").isFalse();
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.1"), condition("True", "x")), before))
        .as("other condition").isFalse();
    Service relabelled = service(uid, 80, List.of("192.0.2.1"), c);
    relabelled.getMetadata().setLabels(java.util.Map.of("a", "b"));
    assertThat(writes.isEcho(relabelled, before)).as("labels changed").isFalse();
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.1"), c), before)).as("still waiting").isTrue();
  }

  @Test
  void aWriteThatLeftItWaitingOrAForgottenServiceIsNeverSkipped() {
    String uid = UUID.randomUUID().toString();
    Service before = service(uid, 80, List.of(), null);
    Condition waiting = condition("False", "no address");
    writes.writing(before, List.of(), waiting);
    assertThat(writes.isEcho(service(uid, 80, List.of(), waiting), before)).isFalse();

    Condition served = condition("True", "192.0.2.1");
    writes.writing(before, List.of("192.0.2.1"), served);
    writes.forget(before);
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.1"), served), before)).isFalse();

    writes.writing(before, List.of("192.0.2.1"), served);
    writes.writing(before, List.of(), null); // unpublished since: the earlier write is no echo any more
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.1"), served), before)).isFalse();

    Object refused = writes.writing(before, List.of("192.0.2.1"), served);
    writes.failed(before, refused); // a 409 or an error: it never comes back
    assertThat(writes.isEcho(service(uid, 80, List.of("192.0.2.1"), served), before)).isFalse();
  }

  @Test
  void aWriteIsAnEchoOnlyToTheTableThatNotedIt() {
    String uid = UUID.randomUUID().toString();
    Service before = service(uid, 80, List.of(), null);
    Condition c = condition("True", "192.0.2.1");
    writes.writing(before, List.of("192.0.2.1"), c);
    Service now = service(uid, 80, List.of("192.0.2.1"), c);
    assertThat(new OwnStatusWrites().isEcho(now, before)).as("another reconciler's table").isFalse();
    assertThat(writes.isEcho(now, before)).isTrue();
  }
}
