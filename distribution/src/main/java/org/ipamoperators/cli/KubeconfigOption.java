package org.ipamoperators.cli;

import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --kubeconfig} of the commands that read a cluster once ({@code ipam audit}, {@code ipam migrate}). */
final class KubeconfigOption {
  @Option(names = "--kubeconfig", paramLabel = "FILE",
      description = "kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
  Path kubeconfig;

  /** The client configuration: the file given, else fabric8's usual lookup. */
  Config config() throws IOException {
    return kubeconfig == null ? Config.autoConfigure(null) : Config.fromKubeconfig(Files.readString(kubeconfig));
  }
}
