package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code ipam ARGS...} from the shaded jar as a process of its own, so that a test can SIGKILL it; output goes to
 * {@code <dir>/<name>.out} and {@code .err}. The caller kills it.
 */
final class OperatorProcess {
  private static final Path JAR = Path.of("target", "ipam.jar");

  private OperatorProcess() {}

  static Process start(Path dir, String name, List<String> ipamArgs, Map<String, String> env) throws Exception {
    assertThat(JAR).as("run `mvn package` first").exists();
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-jar", JAR.toString()));
    command.addAll(ipamArgs);
    ProcessBuilder b = new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
        .redirectError(dir.resolve(name + ".err").toFile());
    b.environment().keySet().removeIf(k -> k.startsWith("AWS_"));
    b.environment().putAll(env);
    return b.start();
  }

  /** Arguments for a replica under leader election with short terms, so a killed leader's Lease expires soon. */
  static List<String> replica(String identity) {
    return List.of("--leader-identity", identity, "--lease-duration", "4s", "--renew-deadline", "3s",
        "--retry-period", "1s");
  }
}
