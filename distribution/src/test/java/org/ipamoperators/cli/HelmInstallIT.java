package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.Release;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * {@code helm install}, {@code upgrade} and {@code uninstall} of the chart against the real
 * apiserver, through Helm's own library: the CRDs are there afterwards, each enabled controller's
 * objects are created, a disabled one's are removed on upgrade, and uninstall leaves no
 * cluster-scoped RBAC behind.
 */
@KubeApiTest(thirdPartyCrds = ThirdPartyCrd.POD_MONITOR)
class HelmInstallIT {
  private static final Path CHART = Path.of("target", "helm", "ipam-operators");

  @Test
  void installUpgradeAndUninstall(KubeApiServer server, KubernetesClient client) {
    String namespace = "helm-" + Long.toHexString(System.nanoTime() & 0xfffff);
    String release = "ipam";
    Release installed = new Helm(CHART).install().withName(release).withNamespace(namespace).createNamespace()
        .withKubeConfigContents(server.kubeconfig()).set("controllers.vip.enabled", true)
        .set("monitoring.podMonitor", true).call();
    assertThat(installed.getStatus()).isEqualTo("deployed");

    for (String crd : List.of("ipclaims.ipam.ipamoperators.org", "ipblocks.ipam.ipamoperators.org",
        "egressipams.redhatcop.redhat.io",
        "ipgroups.paas.org")) {
      assertThat(client.apiextensions().v1().customResourceDefinitions().withName(crd).get()).as(crd).isNotNull();
    }
    assertThat(deployments(client, namespace)).containsExactlyInAnyOrder("ipam-egressip", "ipam-vip");
    assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).inNamespace(namespace).list().getItems()).hasSize(2);
    assertThat(client.rbac().clusterRoles().withName("ipam-vip").get()).isNotNull();

    Release upgraded = new Helm(CHART).upgrade().withName(release).withNamespace(namespace)
        .withKubeConfigContents(server.kubeconfig()).set("controllers.vip.enabled", false).call();
    assertThat(upgraded.getStatus()).isEqualTo("deployed");
    assertThat(upgraded.getRevision()).isEqualTo("2");
    assertThat(deployments(client, namespace)).containsExactly("ipam-egressip");
    assertThat(client.rbac().clusterRoles().withName("ipam-vip").get()).isNull();

    Helm.uninstall(release).withNamespace(namespace).withKubeConfigContents(server.kubeconfig()).call();
    assertThat(deployments(client, namespace)).isEmpty();
    assertThat(client.rbac().clusterRoles().list().getItems()).extracting(ClusterRole::getMetadata)
        .noneMatch(m -> m.getLabels() != null && release.equals(m.getLabels().get("app.kubernetes.io/instance"))
            && "ipam-operators".equals(m.getLabels().get("app.kubernetes.io/name")));
    // Helm keeps CRDs on uninstall (deleting them would delete every EgressIPAM and claim).
    assertThat(client.apiextensions().v1().customResourceDefinitions().withName("ipclaims.ipam.ipamoperators.org")
        .get()).isNotNull();
    client.namespaces().withName(namespace).delete();
  }

  private static List<String> deployments(KubernetesClient client, String namespace) {
    return client.resources(Deployment.class).inNamespace(namespace).list().getItems().stream()
        .map(d -> d.getMetadata().getName()).toList();
  }
}
