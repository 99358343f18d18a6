package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * Scenario 22 of the reference: {@code ipam operator --controllers eip} started, as its own process, the way a
 * k8s-eip-operator Deployment starts it (settings in the old environment variables), with a malformed
 * {@code DEFAULT_TAGS} or one naming a tag the controller writes. It stops at once with exit status 2 and one line
 * naming the option and the variable, before any AWS call or Kubernetes write: an Eip waiting for it gets no
 * address, no finalizer and no status. Failing the start (not serving with a condition) because the setting is
 * the whole operator's, not one object's: there is no object to hold the condition, and serving without the
 * tags the user asked for (cost allocation, ownership) would allocate addresses they do not expect.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
class EipBadSettingsIT {
  private static final Path JAR = Path.of("target", "ipam.jar");
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  private Process operator(Path dir, Path kubeconfig, String ns, MotoServer moto, String defaultTags, String name)
      throws Exception {
    assertThat(JAR).as("run `mvn package` first").exists();
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-jar", JAR.toString()));
    List<String> args = new ArrayList<>(OperatorRun.args(kubeconfig, LoopbackPorts.freePort(), ns,
        "--no-leader-election"));
    args.set(args.indexOf("egressip"), "eip");
    command.addAll(args);
    ProcessBuilder b = new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
        .redirectError(dir.resolve(name + ".err").toFile());
    b.environment().keySet().removeIf(k -> k.startsWith("AWS_") || k.startsWith("EIP_")
        || List.of("CLUSTER_NAME", "NAMESPACE", "DEFAULT_TAGS").contains(k));
    b.environment().put("CLUSTER_NAME", "bad-tags");
    b.environment().put("AWS_REGION", MotoServer.REGION.id());
    b.environment().put("AWS_ENDPOINT_URL", moto.endpoint().toString());
    b.environment().put("AWS_ACCESS_KEY_ID", "test");
    b.environment().put("AWS_SECRET_ACCESS_KEY", "test");
    b.environment().put("DEFAULT_TAGS", defaultTags);
    Process p = b.start();
    processes.add(p);
    return p;
  }

  private void startFailsAndNothingHappens(KubeApiServer server, KubernetesClient client, MotoServer moto,
      Ec2Client ec2, Path dir, String defaultTags, String expected) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String name = "e" + Long.toHexString(System.nanoTime() & 0xffffff);
    Eip e = new Eip();
    e.getMetadata().setName(name);
    e.setSpec(EipSpec.of(EipSelector.pod("db-0")));
    client.resource(e).create();
    int before = ec2.describeAddresses().addresses().size();

    Process p = operator(dir, kubeconfig, client.getNamespace(), moto, defaultTags, name);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the operator stops by itself").isTrue();
    String err = Files.readString(dir.resolve(name + ".err"), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as("exit status; stderr: %s", err).isEqualTo(2);
    assertThat(err.lines().filter(l -> l.startsWith("ipam operator: ")).toList()).singleElement()
        .satisfies(l -> assertThat(l).startsWith("ipam operator: " + expected));

    assertThat(ec2.describeAddresses().addresses()).as("nothing allocated").hasSize(before);
    Eip after = client.resources(Eip.class).withName(name).get();
    assertThat(after.getMetadata().getFinalizers()).as("no finalizer").isNullOrEmpty();
    assertThat(after.getStatus()).as("no status").isNull();
    // Not left behind in the shared apiserver for the next test's operator to serve.
    client.resource(after).delete();
  }

  @Test
  void malformedDefaultTagsStopTheStartWithTheVariableNamed(KubeApiServer server, KubernetesClient client,
      MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    startFailsAndNothingHappens(server, client, moto, ec2, dir, "{\"Stack\": mzcloud}",
        "--eip-default-tags (env DEFAULT_TAGS) is not a JSON object of strings");
  }

  @Test
  void defaultTagsSettingOneOfOurTagsStopTheStart(KubeApiServer server, KubernetesClient client, MotoServer moto,
      Ec2Client ec2, @TempDir Path dir) throws Exception {
    startFailsAndNothingHappens(server, client, moto, ec2, dir, "{\"eip.materialize.cloud/eip_uid\":\"x\"}",
        "--eip-default-tags (env DEFAULT_TAGS) may not set the tag eip.materialize.cloud/eip_uid");
  }
}
