package org.ipamoperators.cli;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.moto.MotoServer;

/** {@code ipam operator --controllers eip} from the shaded jar as a process of its own, talking to moto (or a proxy). */
final class EipOperatorProcess {
  private EipOperatorProcess() {}

  /** Output goes to {@code <dir>/<name>.out} and {@code .err}; the caller kills the process. */
  static Process start(Path dir, Path kubeconfig, String ns, URI ec2, String name, String cluster) throws Exception {
    return start(dir, kubeconfig, ns, ec2, name, cluster, Map.of());
  }

  /**
   * As above, with more environment (EIP_RESYNC_INTERVAL, say). The operator watches only the test's namespace
   * ({@code NAMESPACE}): the apiserver is shared by the test classes of a run, and Eips other tests leave behind (a
   * namespace is never emptied without a namespace controller) would otherwise be served too, with this test's
   * cluster name on their addresses.
   */
  static Process start(Path dir, Path kubeconfig, String ns, URI ec2, String name, String cluster,
      Map<String, String> env) throws Exception {
    List<String> args = new ArrayList<>(OperatorRun.args(kubeconfig, LoopbackPorts.freePort(), ns,
        "--no-leader-election"));
    args.set(args.indexOf("egressip"), "eip");
    Map<String, String> all = new java.util.HashMap<>(Map.of("CLUSTER_NAME", cluster,
        "AWS_REGION", MotoServer.REGION.id(), "AWS_ENDPOINT_URL", ec2.toString(), "AWS_ACCESS_KEY_ID", "test",
        "AWS_SECRET_ACCESS_KEY", "test", "AWS_EC2_METADATA_DISABLED", "true", "NAMESPACE", ns));
    all.putAll(env);
    return OperatorProcess.start(dir, name, args, all);
  }

  /**
   * After a test: kills its operator processes and takes the finalizers off the Eips left, so a
   * deleted test namespace (kept by the shared API server) holds nothing that waits for an operator.
   */
  static void stopAll(List<Process> processes, io.fabric8.kubernetes.client.KubernetesClient client) throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
    }
    client.resources(org.ipamoperators.eip.api.Eip.class).list().getItems().forEach(e -> client
        .resources(org.ipamoperators.eip.api.Eip.class).withName(e.getMetadata().getName()).edit(x -> {
          x.getMetadata().setFinalizers(List.of());
          return x;
        }));
  }
}
