package org.ipamoperators.cli.demo;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code helm install} of the chart with helm-java, for {@code ipam demo --node}, in a JVM of its own: helm-java's
 * native library (a Go runtime) takes over signal handling in the JVM that loads it, and the demo's JVM must still
 * tear the node down on Ctrl-C.
 *
 * <p>Arguments: chart directory, kubeconfig, namespace, release name, then {@code key=value} settings.
 */
final class DemoHelmInstall {
  private DemoHelmInstall() {
  }

  public static void main(String[] args) {
    InstallCommand install = new Helm(Path.of(args[0])).install().withKubeConfig(Path.of(args[1]))
        .withNamespace(args[2]).createNamespace().withName(args[3]);
    for (int i = 4; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      install.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Release release = install.call();
    System.out.println("release " + release.getName() + " " + release.getStatus());
  }

  /** Runs {@link #main} in a child JVM with this JVM's class path; its output, or a failure with it. */
  static String run(Path chart, Path kubeconfig, String namespace, String release, List<String> settings,
      Duration timeout) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-cp", System.getProperty("java.class.path"), DemoHelmInstall.class.getName(), chart.toString(),
        kubeconfig.toString(), namespace, release));
    command.addAll(settings);
    Process p = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("helm install did not finish within " + timeout);
    }
    if (p.exitValue() != 0 || !out.contains(" deployed")) {
      throw new IllegalStateException("helm install failed:\n" + out.strip());
    }
    return out.strip();
  }
}
