package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Without its CRD the operator refuses to start with one line; {@code --install-crds} installs it. */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"})
class CrdInstallIT {
  private static final String CRD = "egressipams.redhatcop.redhat.io";

  @AfterEach
  void crdsAreBack(KubeApiServer server) {
    CrdInstaller.install(server.adminClient(), "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
        "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
        "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml");
  }

  @Test
  void aMissingCrdIsOneLineAndInstallCrdsInstallsIt(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    KubernetesClient admin = server.adminClient();
    admin.apiextensions().v1().customResourceDefinitions().withName(CRD).delete();
    await().atMost(Duration.ofSeconds(60))
        .until(() -> admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get() == null);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());

    OperatorRun refused = OperatorRun.start(OperatorRun.args(kubeconfig, 0, client.getNamespace(),
        "--no-leader-election").toArray(String[]::new));
    assertThat(refused.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
    assertThat(refused.err().lines().toList()).isEqualTo(List.of("ipam operator: the CRD " + CRD
        + " is not installed in the cluster at " + server.url()
        + " (apply the CRDs shipped with ipam, or run with --install-crds)"));

    int port = LoopbackPorts.freePort();
    try (OperatorRun run = OperatorRun.start(OperatorRun.args(kubeconfig, port, client.getNamespace(),
        "--no-leader-election", "--install-crds").toArray(String[]::new))) {
      run.awaitReady(port, "ok\n");
      CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
      assertThat(crd.getStatus().getConditions())
          .anySatisfy(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Established=True"));
      assertThat(crd.getMetadata().getManagedFields())
          .anySatisfy(f -> assertThat(f.getManager()).isEqualTo(OperatorCommand.FIELD_MANAGER));
      EgressFixtures.egressIpam(client, "after-install", "192.0.2.0/29", "egress-zone", "a");
      await().atMost(Duration.ofSeconds(60)).ignoreExceptions().failFast(run::assertRunning)
          .untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
              .contains("egressipam=\"after-install\""));
    }
  }
}
