package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.ipamoperators.controller.common.ledger.IPClaim;
import picocli.CommandLine;

/** What the plan-matches-operator ITs share: a cluster read back as kubectl prints it, the plan of it, cleanup. */
final class PlanRuns {
  private PlanRuns() {}

  /** {@code objects} as one List, as {@code kubectl get ... -o yaml} prints them. */
  static String asKubectlWould(KubernetesClient client, List<HasMetadata> objects) {
    KubernetesList list = new KubernetesList();
    list.setItems(objects);
    return client.getKubernetesSerialization().asYaml(list);
  }

  /** {@code ipam plan -o json FILE}, which must succeed without a word on stderr. */
  static JsonNode plan(Path file) throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = IpamCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute("plan", "-o", "json", file.toString());
    assertThat(code).as("ipam plan: %s", err).isZero();
    assertThat(err.toString()).isEmpty();
    return new ObjectMapper().readTree(out.toString());
  }

  /** Deletes what the test applied (best effort: the apiserver is this JVM's own) and every IPClaim. */
  static void cleanup(KubernetesClient client, List<HasMetadata> applied) {
    for (HasMetadata o : applied) {
      try {
        client.resource(o).withGracePeriod(0).delete();
      } catch (RuntimeException e) {
        // cluster-scoped kinds are swept after the test
      }
    }
    client.resources(IPClaim.class).delete();
  }
}
