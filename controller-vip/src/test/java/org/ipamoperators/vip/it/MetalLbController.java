package org.ipamoperators.vip.it;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.testsupport.crds.CrdInstaller;

/**
 * MetalLB's controller as {@link VipScaleBenchmark}'s other contender: a binary and MetalLB's CRDs given by
 * path (nothing of MetalLB is part of this repository). It runs as MetalLB's own manifests run it (their
 * flags: {@code --port}, {@code --log-level=info}, {@code --tls-min-version=VersionTLS12}; it has no leader
 * election), with two differences a test apiserver needs: {@code --webhook-mode=disabled}, since the apiserver
 * cannot call back into a test process (and the certificate rotation that serves the webhook is not the work
 * measured), and no memberlist secret (its owner, MetalLB's Deployment, does not exist; speakers alone use it).
 */
final class MetalLbController {
  private final Path binary;
  private final Path crdDir;

  MetalLbController(Path binary, Path crdDir) {
    this.binary = binary;
    this.crdDir = crdDir;
  }

  /** Installs MetalLB's CRDs and, in {@code namespace}, one IPAddressPool of {@code cidr} (auto-assigned). */
  void install(KubernetesClient client, String namespace, String cidr) throws IOException {
    List<CustomResourceDefinition> crds = new ArrayList<>();
    try (Stream<Path> files = Files.list(crdDir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        try (InputStream in = Files.newInputStream(f)) {
          client.load(in).items().forEach(o -> crds.add(
              client.getKubernetesSerialization().convertValue(o, CustomResourceDefinition.class)));
        }
      }
    }
    if (crds.isEmpty()) {
      throw new IllegalArgumentException("no CRD yaml in " + crdDir);
    }
    CrdInstaller.install(client, crds);
    GenericKubernetesResource pool = new GenericKubernetesResourceBuilder().withApiVersion("metallb.io/v1beta1")
        .withKind("IPAddressPool").withNewMetadata().withName("vip-scale-benchmark").withNamespace(namespace)
        .endMetadata().withAdditionalProperties(Map.of("spec", Map.of("addresses", List.of(cidr)))).build();
    client.resource(pool).create();
  }

  /** The controller's command line: its configuration namespace is the Services' namespace. */
  List<String> command(Path kubeconfig, String namespace) throws IOException {
    return List.of(binary.toString(), "--kubeconfig=" + kubeconfig, "--namespace=" + namespace,
        "--port=" + freePort(), "--log-level=info", "--tls-min-version=VersionTLS12", "--webhook-mode=disabled");
  }

  /** controller-runtime's line once the Service controller's cache is synced and its workers start. */
  static boolean isSynced(String line) {
    return line.contains("Starting workers") && line.contains("\"controller\":\"service\"");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
