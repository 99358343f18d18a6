package org.ipamoperators.testsupport.kube.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a controller test looks like: a JOSDK operator with its defaults (server-side apply for status and
 * finalizers) reconciling in the test's namespace on the real apiserver.
 */
@KubeApiTest(crds = "crds/test/widgets.test.ipamoperators.org.yaml")
class JosdkOperatorIT {

  private final WidgetReconciler reconciler = new WidgetReconciler();
  private Operator operator;

  @BeforeEach
  void startOperator(KubeApiServer server, KubernetesClient client) {
    operator = new Operator(o -> o.withKubernetesClient(server.newClient()).withCloseClientOnStop(true));
    operator.register(reconciler, c -> c.settingNamespaces(client.getNamespace()));
    operator.start();
  }

  @AfterEach
  void stopOperator() {
    operator.stop();
  }

  @Test
  void reconcilesStatusAndCleansUpBeforeTheObjectGoes(KubernetesClient client) {
    Widget widget = new Widget();
    widget.getMetadata().setName("w1");
    widget.setSpec(new Widget.Spec());
    widget.getSpec().setCidr("192.0.2.0/24");
    widget.getSpec().setSize(1);
    client.resource(widget).create();

    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      Widget current = client.resources(Widget.class).withName("w1").get();
      assertThat(current.getStatus()).isNotNull();
      assertThat(current.getStatus().getPhase()).isEqualTo("Ready");
      assertThat(current.getStatus().getAllocated()).containsExactly("192.0.2.1");
      assertThat(current.getMetadata().getFinalizers()).isNotEmpty();
      assertThat(current.getSpec().getMode()).as("defaulted by the schema").isEqualTo("Dynamic");
    });

    client.resources(Widget.class).withName("w1").delete();

    await().atMost(Duration.ofSeconds(30)).until(() -> client.resources(Widget.class).withName("w1").get() == null);
    assertThat(reconciler.released).containsExactly("w1");
  }

  @ControllerConfiguration
  static class WidgetReconciler implements Reconciler<Widget>, Cleaner<Widget> {

    final Set<String> released = ConcurrentHashMap.newKeySet();

    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) {
      String network = widget.getSpec().getCidr().substring(0, widget.getSpec().getCidr().lastIndexOf('.'));
      Widget patch = new Widget();
      patch.getMetadata().setName(widget.getMetadata().getName());
      patch.getMetadata().setNamespace(widget.getMetadata().getNamespace());
      patch.setStatus(new Widget.Status());
      patch.getStatus().setPhase("Ready");
      patch.getStatus().setAllocated(List.of(network + ".1"));
      return UpdateControl.patchStatus(patch);
    }

    @Override
    public DeleteControl cleanup(Widget widget, Context<Widget> context) {
      released.add(widget.getMetadata().getName());
      return DeleteControl.defaultDelete();
    }
  }
}
