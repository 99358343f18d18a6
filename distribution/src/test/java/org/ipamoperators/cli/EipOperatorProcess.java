package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.moto.MotoServer;

/** {@code ipam operator --controllers eip} from the shaded jar as a process of its own, talking to moto (or a proxy). */
final class EipOperatorProcess {
  private static final Path JAR = Path.of("target", "ipam.jar");

  private EipOperatorProcess() {}

  /** Output goes to {@code <dir>/<name>.out} and {@code .err}; the caller kills the process. */
  static Process start(Path dir, Path kubeconfig, String ns, URI ec2, String name, String cluster) throws Exception {
    assertThat(JAR).as("run `mvn package` first").exists();
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-jar", JAR.toString()));
    List<String> args = new ArrayList<>(OperatorRun.args(kubeconfig, LoopbackPorts.freePort(), ns,
        "--no-leader-election"));
    args.set(args.indexOf("egressip"), "eip");
    command.addAll(args);
    ProcessBuilder b = new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
        .redirectError(dir.resolve(name + ".err").toFile());
    b.environment().keySet().removeIf(k -> k.startsWith("AWS_"));
    b.environment().put("CLUSTER_NAME", cluster);
    b.environment().put("AWS_REGION", MotoServer.REGION.id());
    b.environment().put("AWS_ENDPOINT_URL", ec2.toString());
    b.environment().put("AWS_ACCESS_KEY_ID", "test");
    b.environment().put("AWS_SECRET_ACCESS_KEY", "test");
    b.environment().put("AWS_EC2_METADATA_DISABLED", "true");
    return b.start();
  }
}
