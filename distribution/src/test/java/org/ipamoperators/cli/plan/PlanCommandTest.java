package org.ipamoperators.cli.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.ipamoperators.cli.IpamRun;
import org.ipamoperators.cli.JsonOutput;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Runs the real command line on the shipped examples and on broken files. */
class PlanCommandTest {
  private static final Path EXAMPLES = Path.of("..", "examples");

  static IpamRun ipam(String... args) {
    return IpamRun.of(args);
  }

  static Stream<Path> examples() throws IOException {
    return Files.list(EXAMPLES).filter(p -> p.toString().endsWith(".yaml")).sorted();
  }

  @ParameterizedTest
  @MethodSource("examples")
  void everyExamplePlansWithoutError(Path example) throws IOException {
    IpamRun r = ipam("plan", example.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.err()).isEmpty();
    String text = Files.readString(example);
    if (ClusterObjects.looksLikeObjects(text)) {
      if (text.contains("kind: EgressIPAM")) {
        assertThat(r.out()).contains("EgressIPAM ", "namespaces served", "nodes:", "problems");
      }
      if (text.contains("kind: IPGroup")) {
        assertThat(r.out()).contains("LoadBalancer Services", "problems:");
      }
    } else {
      assertThat(r.out()).contains("Allocations", "Placement", "Changes", "Problems");
    }
  }

  @Test
  void objectsArePlannedByTheEgressPolicy() throws Exception {
    IpamRun r = ipam("plan", EXAMPLES.resolve("egress-objects.yaml").toString());
    assertThat(r.out())
        .containsPattern("payments\\s+203\\.0\\.113\\.69 on worker-a2, 203\\.0\\.113\\.87 on worker-b1")
        .as("the vip's claim on .67 and the node's own .66 are never handed out").doesNotContain("203.0.113.67 (new)")
        .doesNotContain("203.0.113.66 (new)")
        .contains("worker-b2 (zone-b): failed, takes no new addresses, hosts 0")
        .contains("worker-a2 (zone-a): healthy, hosts 1 of 1")
        .contains("reports: egressips '203.0.113.73' has 1 address for 2 CIDRs")
        .doesNotContain("Not used for planning:");
    assertThat(ipam("plan", "--fail-on-problems", EXAMPLES.resolve("egress-objects.yaml").toString()).exit())
        .as("the rejected namespace is a problem").isEqualTo(1);
    JsonNode root = new ObjectMapper().readTree(ipam("plan", "-o", "json",
        EXAMPLES.resolve("egress-objects.yaml").toString()).out());
    JsonNode ipam = root.get("egressIPAMs").get(0);
    assertThat(ipam.get("namespaces").findValuesAsText("name")).containsExactly("billing", "payments");
    assertThat(ipam.get("problems").findValuesAsText("reason")).containsExactly("INVALID_ANNOTATION");
    assertThat(ipam.get("problems").get(0).fieldNames()).toIterable().containsExactly("subject", "reason", "message");
    assertThat(ipam.get("cidrs").get(0).fieldNames()).toIterable()
        .containsExactly("cidr", "capacity", "allocated", "free");
  }

  @Test
  void vipObjectsArePlannedByTheVipPlanner() throws Exception {
    Path example = EXAMPLES.resolve("vip-objects.yaml");
    IpamRun r = ipam("plan", example.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .containsPattern("shop/checkout\\s+203\\.0\\.113\\.100 \\(kept\\)\n")
        .as(".96 is the network address, .97 excluded, .98 an egress claim: the first free is .99")
        .containsPattern("shop/cart\\s+203\\.0\\.113\\.99 \\(new\\)\n")
        .containsPattern("shop/legacy\\s+pending\n\\s+AddressUnavailable: .*198\\.51\\.100\\.7")
        .as("not a LoadBalancer").doesNotContain("shop/internal")
        .doesNotContain("EgressIPAM").contains("problems: 1 Service\n");
    assertThat(ipam("plan", "--fail-on-problems", example.toString()).exit()).as("legacy waits").isEqualTo(1);

    JsonNode root = new ObjectMapper().readTree(ipam("plan", "-o", "json", example.toString()).out());
    assertThat(root.fieldNames()).toIterable().as("the document says what it is first")
        .startsWith("kind", "schemaVersion");
    assertThat(root.get("kind").asText()).isEqualTo("ObjectsPlanReport");
    assertThat(root.get("schemaVersion").asText()).isEqualTo("v1");
    assertThat(root.get("egressIPAMs")).isEmpty();
    JsonNode services = root.get("services");
    assertThat(services.findValuesAsText("name")).containsExactly("cart", "checkout", "legacy");
    JsonNode cart = services.get(0);
    assertThat(cart.get("namespace").asText()).isEqualTo("shop");
    assertThat(cart.get("ingress").get(0).asText()).isEqualTo("203.0.113.99");
    assertThat(cart.get("new").get(0).asText()).isEqualTo("203.0.113.99");
    assertThat(cart.get("kept")).isEmpty();
    assertThat(cart.get("problems")).isEmpty();
    JsonNode checkout = services.get(1);
    assertThat(checkout.get("kept").get(0).asText()).isEqualTo("203.0.113.100");
    assertThat(checkout.get("new")).isEmpty();
    JsonNode legacy = services.get(2);
    assertThat(legacy.get("ingress")).isEmpty();
    assertThat(legacy.get("problems").get(0).get("reason").asText()).isEqualTo("AddressUnavailable");
    assertThat(legacy.get("problems").get(0).get("blocking").asBoolean()).isTrue();
  }

  @Test
  void eachServiceSeesWhatTheServicesBeforeItClaimed(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("vips.yaml"), """
        apiVersion: paas.org/v1
        kind: IPGroup
        metadata: {name: small}
        spec: {cidrs: [203.0.113.200-203.0.113.202]}
        ---
        apiVersion: v1
        kind: ServiceList
        items:
        - apiVersion: v1
          kind: Service
          metadata: {name: a, namespace: x}
          spec: {type: LoadBalancer, ports: [{port: 80, protocol: TCP}]}
        - apiVersion: v1
          kind: Service
          metadata: {name: b, namespace: x, annotations: {ipam.ipamoperators.org/allow-shared-ip: k}}
          spec: {type: LoadBalancer, ports: [{port: 80, protocol: TCP}]}
        - apiVersion: v1
          kind: Service
          metadata: {name: c, namespace: x, annotations: {ipam.ipamoperators.org/allow-shared-ip: k}}
          spec: {type: LoadBalancer, ports: [{port: 443, protocol: TCP}]}
        - apiVersion: v1
          kind: Service
          metadata: {name: d, namespace: x}
          spec: {type: LoadBalancer, ports: [{port: 80, protocol: TCP}]}
        - apiVersion: v1
          kind: Service
          metadata: {name: e, namespace: x}
          spec: {type: LoadBalancer, ports: [{port: 80, protocol: TCP}]}
        """);
    JsonNode services = new ObjectMapper().readTree(ipam("plan", "-o", "json", f.toString()).out()).get("services");
    assertThat(services.findValuesAsText("name")).containsExactly("a", "b", "c", "d", "e");
    assertThat(services.get(0).get("ingress").get(0).asText()).isEqualTo("203.0.113.200");
    assertThat(services.get(1).get("ingress").get(0).asText()).isEqualTo("203.0.113.201");
    assertThat(services.get(2).get("ingress").get(0).asText()).as("joins its sharing key's address")
        .isEqualTo("203.0.113.201");
    assertThat(services.get(3).get("ingress").get(0).asText()).isEqualTo("203.0.113.202");
    assertThat(services.get(4).get("ingress")).as("the group is used up").isEmpty();
    assertThat(services.get(4).get("problems").get(0).get("reason").asText()).isEqualTo("PoolExhausted");
  }

  @Test
  void aFileWithEgressIpamsAndIpGroupsGetsBothPlans(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("both.yaml"), Files.readString(EXAMPLES.resolve("egress-objects.yaml"))
        + "\n---\n" + Files.readString(EXAMPLES.resolve("vip-objects.yaml")));
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("EgressIPAM egress-two-zones", "LoadBalancer Services")
        .containsPattern("shop/cart\\s+203\\.0\\.113\\.99 \\(new\\)");
    JsonNode root = new ObjectMapper().readTree(ipam("plan", "-o", "json", f.toString()).out());
    assertThat(root.get("egressIPAMs")).hasSize(1);
    assertThat(root.get("services")).hasSize(3);
  }

  @Test
  void aFileOfObjectsWithSomethingElseInItIsRefused(@TempDir Path dir) throws IOException {
    Path f = Files.writeString(dir.resolve("mixed.yaml"), """
        apiVersion: v1
        kind: Namespace
        metadata: {name: a}
        ---
        pools: []
        """);
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("document 2: not a Kubernetes object");
    Path bad = Files.writeString(dir.resolve("bad.yaml"), """
        apiVersion: redhatcop.redhat.io/v1alpha1
        kind: EgressIPAM
        metadata: {name: x}
        spec: {cidrAssignments: "not a list"}
        """);
    IpamRun b = ipam("plan", bad.toString());
    assertThat(b.exit()).isEqualTo(2);
    assertThat(b.err()).contains("EgressIPAM x:");
    Path other = Files.writeString(dir.resolve("other.yaml"), """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: c}
        """);
    assertThat(ipam("plan", other.toString()).out()).contains("No EgressIPAM among the objects")
        .contains("Not used for planning: 1 ConfigMap");
  }

  @Test
  void twoZoneExampleKeepsExistingAddressesAndMovesOffTheFailedNode() {
    IpamRun r = ipam("plan", EXAMPLES.resolve("egress-two-zones.yaml").toString());
    assertThat(r.out())
        .containsPattern("payments\\s+zone-a\\s+192\\.0\\.2\\.4\\s+kept")
        .containsPattern("billing\\s+zone-a\\s+192\\.0\\.2\\.5\\s+kept")
        .contains("move   192.0.2.5 from worker-a3 to worker-a2  (node worker-a3 is not eligible)");
  }

  @Test
  void jsonOutputIsMachineReadable() throws Exception {
    IpamRun r = ipam("plan", "-o", "json", EXAMPLES.resolve("problems.yaml").toString());
    assertThat(r.exit()).isZero();
    JsonNode root = new ObjectMapper().readTree(r.out());
    assertThat(root.get("kind").asText()).isEqualTo("PlanReport");
    assertThat(root.get("schemaVersion").asText()).isEqualTo(JsonOutput.SCHEMA_VERSION);
    assertThat(root.get("allocations")).hasSize(2);
    assertThat(root.get("problems").findValuesAsText("kind"))
        .contains("invalid-pool", "conflict", "unallocated", "unplaceable");
    assertThat(root.get("pools").get(0).get("free").asInt()).isZero();
  }

  @Test
  void failOnProblemsSetsTheExitStatus() {
    assertThat(ipam("plan", "--fail-on-problems", EXAMPLES.resolve("problems.yaml").toString()).exit()).isEqualTo(1);
    assertThat(ipam("plan", "--fail-on-problems", EXAMPLES.resolve("egress-two-zones.yaml").toString()).exit()).isZero();
  }

  @Test
  void yamlSyntaxErrorsNameTheLine(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "pools:\n  - name: a\n    ranges: [192.0.2.0/24\nnodes: []\n");
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).startsWith("ipam plan: " + f + ":4:").doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void unknownFieldsNameTheLineAndTheKnownFields(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "pools:\n  - name: a\n    ranges: [192.0.2.0/24]\n    reserve: [192.0.2.1]\n");
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains(f + ":4:").contains("unknown field 'reserve'").contains("reserved");
  }

  @Test
  void wrongTypesNameTheField(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "pools:\n  - name: a\n    ranges: [192.0.2.0/24]\nnodes:\n  - name: n1\n    capacity: lots\n");
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains(":6:").contains("nodes[0].capacity").contains("'lots' is not a whole number");
  }

  @Test
  void badValuesNameTheFieldPathAndAllAreReported(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, String.join("\n",
        "pools:",
        "  - name: a",
        "    ranges: [192.0.2.0/24]",
        "    strategy: fastest",
        "claims:",
        "  - {address: 192.0.2.300, owner: x}",
        "  - {address: 192.0.2.9}",
        "claimants:",
        "  - {name: c}",
        ""));
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("pools[0].strategy: 'fastest' is not one of FIRST_FREE, RANDOM, STICKY")
        .contains("claims[0].address: '192.0.2.300' is not an IP address")
        .contains("claims[1].owner: every claim needs an owner")
        .contains("claimants[0].pools: claimant 'c' names no pool");
  }

  @Test
  void aZeroPaddedRangeIsAProblemNotAnotherSubnet(@TempDir Path dir) throws IOException {
    // The library's lenient default read 192.168.010.0/24 as 192.168.8.0/24 and planned 192.168.8.2.
    Path f = Files.writeString(dir.resolve("padded.yaml"), String.join("\n",
        "pools:",
        "  - {name: a, ranges: [192.168.010.0/24]}",
        "claimants:",
        "  - {name: ns, pools: [a]}",
        ""));
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("did you mean 192.168.10.0/24?").doesNotContain("192.168.8.");
    Path claim = Files.writeString(dir.resolve("claim.yaml"), String.join("\n",
        "pools:",
        "  - {name: a, ranges: [192.168.10.0/24]}",
        "claims:",
        "  - {address: 192.168.10.07, owner: x}",
        ""));
    IpamRun c = ipam("plan", claim.toString());
    assertThat(c.exit()).isEqualTo(2);
    assertThat(c.err()).contains("claims[0].address").contains("did you mean 192.168.10.7?");
  }

  @Test
  void ipv6PoolsLeaveOutTheAnycastAddressesAndSayHowMany(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("v6.yaml"), String.join("\n",
        "pools:",
        "  - {name: v6, ranges: [\"2001:db8:5::/64\"], strategy: FIRST_FREE}",
        "claimants:",
        "  - {name: ns, pools: [v6]}",
        ""));
    IpamRun r = ipam("plan", f.toString());
    assertThat(r.out()).containsPattern("v6\\s+IPv6\\s+capacity 18446744073709551359 ")
        .contains("(257 anycast addresses left out: Subnet-Router, RFC 2526)")
        .containsPattern("ns\\s+v6\\s+2001:db8:5::1\\s+new");
    JsonNode pool = new ObjectMapper().readTree(ipam("plan", "-o", "json", f.toString()).out()).get("pools").get(0);
    assertThat(pool.get("anycastExcluded").asInt()).isEqualTo(257);
  }

  @Test
  void missingAndEmptyFilesAreExplained(@TempDir Path dir) throws IOException {
    IpamRun missing = ipam("plan", dir.resolve("nope.yaml").toString());
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err()).contains("no such file");
    Path empty = Files.writeString(dir.resolve("empty.yaml"), "");
    assertThat(ipam("plan", empty.toString()).err()).contains("the file is empty");
  }

  @Test
  void usageErrorsExitWith2() {
    assertThat(ipam("plan").exit()).isEqualTo(2);
    assertThat(ipam("plan", "-o", "xml", "x.yaml").exit()).isEqualTo(2);
    assertThat(ipam("--help").out()).contains("plan");
  }

  @Test
  void theCommandListShowsWholeSentences() {
    // picocli lists each subcommand with one line: it used to be "...existing claims, and prints the".
    String help = ipam("--help").out();
    assertThat(help).doesNotContain("and prints the")
        .containsPattern("plan\\s+Plans a cluster described in YAML; changes nothing\\.");
  }
}
