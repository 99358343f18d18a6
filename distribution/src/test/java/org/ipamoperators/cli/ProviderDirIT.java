package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.cli.operator.ProviderJarsTest;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code ipam operator} with the example provider's jar (examples/custom-provider, compiled
 * here) in its provider directory: the platform the jar names is handed to that provider, which the
 * EgressIPAM's Ready condition names; without the directory no provider serves that platform.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class ProviderDirIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final String node = "fictional-" + Long.toHexString(System.nanoTime() & 0xffffff);

  @AfterEach
  void cleanUp(KubernetesClient client) {
    client.nodes().withName(node).delete();
    client.genericKubernetesResources("redhatcop.redhat.io/v1alpha1", "EgressIPAM").withName("fictional").delete();
  }

  @Test
  void aPlatformNamedByAJarInTheProviderDirectoryGoesToThatProvider(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    Path providers = Files.createDirectories(dir.resolve("providers"));
    ProviderJarsTest.jar(dir.resolve("classes"), providers.resolve("fictional-cloud-provider.jar"));
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    EgressFixtures.readyNode(client, node, Map.of("egress-zone", "fictional"));
    EgressFixtures.egressIpam(client, "fictional", "192.0.2.128/28", "egress-zone", "fictional");

    assertThat(readyMessage(client, kubeconfig, List.of()))
        .contains("no NodeNetwork provider serves platform Fictional").doesNotContain("provider fictional");
    assertThat(readyMessage(client, kubeconfig, List.of("--provider-dir", providers.toString())))
        .as("the jar's provider was chosen and asked to serve (it needs IPAM_FICTIONAL_CLOUD)")
        .contains("NodeNetwork provider fictional cannot serve platform Fictional: which fictional cloud? set "
            + "IPAM_FICTIONAL_CLOUD");
  }

  /** The EgressIPAM's Ready message once a run of the operator with {@code more} options has written it. */
  private static String readyMessage(KubernetesClient client, Path kubeconfig, List<String> more) throws Exception {
    int port = LoopbackPorts.freePort();
    List<String> args = new java.util.ArrayList<>(OperatorRun.args(kubeconfig, port, client.getNamespace(),
        "--no-leader-election", "--platform", "Fictional"));
    args.addAll(more);
    String before = message(client);
    try (OperatorRun run = OperatorRun.start(args.toArray(String[]::new))) {
      run.awaitReady(port, "ok\n");
      String[] seen = new String[1];
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        seen[0] = message(client);
        assertThat(seen[0]).isNotNull().isNotEqualTo(before).contains("platform Fictional");
      });
      return seen[0];
    }
  }

  private static String message(KubernetesClient client) {
    GenericKubernetesResource ipam = client.genericKubernetesResources("redhatcop.redhat.io/v1alpha1", "EgressIPAM")
        .withName("fictional").get();
    List<Map<String, Object>> conditions = ipam == null ? null : ipam.get("status", "conditions");
    return conditions == null ? null : conditions.stream().filter(c -> "Ready".equals(c.get("type")))
        .map(c -> String.valueOf(c.get("message"))).findFirst().orElse(null);
  }
}
