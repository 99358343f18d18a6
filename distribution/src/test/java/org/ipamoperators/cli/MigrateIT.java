package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ipam migrate} on a real apiserver holding what the old operators leave: their CRDs as they ship (the eip
 * one server-side applied by its field manager, as k8s-eip-operator does at each start), their sample objects,
 * a namespace holding egress IPs, a KeepalivedGroup with router ids, an Eip with its Elastic IP and finalizer, and
 * Deployments named and imaged as their manifests make them. The apiserver is the test's own: the old CRDs take
 * names the shared apiserver holds with our schema. Its addresses are data only.
 */
class MigrateIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String EIP_MANAGER = "eip.materialize.cloud";

  private KubeApiServer server;
  private KubernetesClient admin;

  @BeforeEach
  void setUp() throws IOException {
    server = KubeApiServer.startPrivate();
    admin = server.newClient();
    for (String ns : List.of("egressip-ipam-operator", "keepalived-operator", "eip", "shop")) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }
    // Created, as their READMEs' client-side `kubectl apply` does (a write of operation Update, not Apply).
    for (CustomResourceDefinition crd : CrdInstaller.load("migrate/egressip/00-crd.yaml", "migrate/keepalived/00-crd.yaml",
        "migrate/vip/00-crd-ipgroups.yaml", "migrate/vip/00-crd-ips.yaml")) {
      admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
      CrdInstaller.awaitEstablished(admin, crd.getMetadata().getName(), CrdInstaller.ESTABLISH_TIMEOUT);
    }
    try (InputStream in = resource("migrate/eip/00-crd.json")) {
      CustomResourceDefinition crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
      admin.apiextensions().v1().customResourceDefinitions().resource(crd).fieldManager(EIP_MANAGER).serverSideApply();
      CrdInstaller.awaitEstablished(admin, crd.getMetadata().getName(), CrdInstaller.ESTABLISH_TIMEOUT);
    }
    create("migrate/egressip/10-egressipam-aws.yaml", null);
    create("migrate/egressip/10-egressipam-baremetal.yaml", null);
    create("migrate/keepalived/10-keepalivedgroup.yaml", "keepalived-operator");
    create("migrate/vip/10-ipgroup.yaml", null);
    create("migrate/vip/10-ip.yaml", null);
  }

  @AfterEach
  void tearDown() {
    try {
      admin.close();
    } finally {
      server.stop();
    }
  }

  @Test
  void reportsWhatIsAdoptedWhatBlocksAndTheStepsThenNothingBlocksOnceTheFixesAreDone(@TempDir Path dir)
      throws Exception {
    // What the old operators left: an EgressIPAM their CRD accepts and ours refuses (overlapping CIDRs)...
    admin.resource(generic("redhatcop.redhat.io/v1alpha1", "EgressIPAM", null, "overlapping", Map.of(
        "topologyLabel", "egressGateway", "cidrAssignments", List.of(
            Map.of("labelValue", "a", "CIDR", "10.10.0.0/24"), Map.of("labelValue", "b", "CIDR", "10.10.0.0/25")))))
        .create();
    // ...a namespace with its egress IP, router ids in a group's status, an Eip with its address and finalizer.
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("pay")
        .addToAnnotations(EgressAnnotations.EGRESSIPAM, "egressipam-baremetal")
        .addToAnnotations(EgressAnnotations.EGRESSIPS, "192.169.0.5").endMetadata().build()).create();
    GenericKubernetesResource group = admin.genericKubernetesResources(context("redhatcop.redhat.io", "v1alpha1",
        "KeepalivedGroup", "keepalivedgroups")).inNamespace("keepalived-operator").withName("keepalivedgroup-workers").get();
    group.getAdditionalProperties().put("status", Map.of("routerIDs", Map.of("shop/web", 3)));
    admin.resource(group).updateStatus();
    GenericKubernetesResource eip = admin.resource(generic("materialize.cloud/v2", "Eip", "shop", "web",
        Map.of("selector", Map.of("pod", Map.of("podName", "web-0"))))).create();
    eip.getMetadata().setFinalizers(List.of("eip.materialize.cloud/destroy"));
    eip = admin.resource(eip).update();
    eip.getAdditionalProperties().put("status", Map.of("allocationId", "eipalloc-0123", "publicIpAddress", "203.0.113.7"));
    admin.resource(eip).updateStatus();
    // An IPGroup and the reservation of a Service's address, as the old vip operator writes them.
    admin.resource(generic("paas.org/v1", "IPGroup", null, "web-pool", Map.of("segment", "192.0.2.0/24",
        "excludedIPs", List.of("192.0.2.0")))).create();
    GenericKubernetesResource ip = generic("paas.org/v1", "IP", null, "192.0.2.10", Map.of());
    ip.getMetadata().setLabels(Map.of("ipgroup", "web-pool"));
    ip.getMetadata().setAnnotations(Map.of("virtualips.paas.il/owner", "shop/web"));
    admin.resource(ip).create();
    deployment("egressip-ipam-operator", "egressip-ipam-operator-controller-manager", 1,
        "registry.example/redhat-cop/egressip-ipam-operator:v1.2.4", Map.of());
    deployment("eip", "eip-operator", 0, "materialize/k8s-eip-operator", Map.of("CLUSTER_NAME", "test",
        "AWS_REGION", "me-south-1"));
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());

    IpamRun run = IpamRun.of("migrate", "--kubeconfig", kubeconfig.toString(), "--chart", "ipam-operators-1.0.tgz",
        "-o", "json");
    assertThat(run.exit()).as(run.err() + run.out()).isEqualTo(1);
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("kind").asText()).isEqualTo("MigrationReport");
    assertThat(report.path("schemaVersion").asText()).isEqualTo(JsonOutput.SCHEMA_VERSION);
    assertThat(report.path("blocked").asBoolean()).isTrue();

    JsonNode egress = section(report, "egressip-ipam-operator");
    assertThat(egress.path("counts").path("EgressIPAM").asInt()).isEqualTo(3);
    assertThat(texts(egress, "adopted")).contains("Namespace pay: egress IPs 192.169.0.5 kept (EgressIPAM egressipam-baremetal)");
    String scale = "kubectl scale deploy/egressip-ipam-operator-controller-manager --replicas=0 -n egressip-ipam-operator";
    assertThat(fixes(egress)).containsExactly(scale, "correct its spec before the switch (egressip-ipam-operator accepted"
        + " it; the new controller marks it Invalid and serves none of its addresses)");
    assertThat(texts(egress.path("blockers"), "problem")).anySatisfy(p -> assertThat(p)
        .startsWith("EgressIPAM overlapping would be refused").contains("overlaps cidrAssignments[0].CIDR 10.10.0.0/24"));
    assertThat(texts(egress, "steps")).containsExactly(scale, "tar xzf ipam-operators-1.0.tgz",
        "kubectl apply --server-side --force-conflicts -f ipam-operators/crds/egressipams.redhatcop.redhat.io-v1.yml",
        "helm upgrade --install ipam ipam-operators-1.0.tgz -n ipam-operators --create-namespace --reuse-values"
            + " --set controllers.egressip.enabled=true",
        "ipam audit --controllers egressip");

    JsonNode keepalived = section(report, "keepalived-operator");
    assertThat(keepalived.path("installed").asBoolean()).isTrue();
    assertThat(texts(keepalived, "adopted")).containsExactly(
        "KeepalivedGroup keepalived-operator/keepalivedgroup-workers: router ids {shop/web=3} kept");
    assertThat(keepalived.path("blockers")).isEmpty();
    Object sampleImage = ((Map<?, ?>) group.getAdditionalProperties().get("spec")).get("image");
    assertThat(texts(keepalived, "steps")).contains("helm upgrade --install ipam ipam-operators-1.0.tgz -n ipam-operators"
        + " --create-namespace --reuse-values --set controllers.keepalived.enabled=true --set-json"
        + " 'controllers.keepalived.trust.allowedImages=[\"" + sampleImage + "\"]'");

    JsonNode vip = section(report, "vip-allocator-operator");
    assertThat(vip.path("counts").path("IPGroup").asInt()).isEqualTo(2);
    assertThat(vip.path("counts").path("IP").asInt()).isEqualTo(2);
    assertThat(texts(vip, "adopted")).containsExactly("IP 192.0.2.10: claimed for Service shop/web in IPGroup web-pool");
    // The project's own sample has an empty spec, which its CRD lets through and the vip controller refuses.
    assertThat(texts(vip.path("blockers"), "problem")).containsExactly("IPGroup ipgroup-sample would be refused by the"
        + " vip controller: spec is missing: give spec.segment or spec.cidrs");
    assertThat(texts(vip, "steps")).containsExactly("tar xzf ipam-operators-1.0.tgz",
        "kubectl apply --server-side --force-conflicts -f ipam-operators/crds/ipgroups.paas.org-v1.yml",
        "helm upgrade --install ipam ipam-operators-1.0.tgz -n ipam-operators --create-namespace --reuse-values"
            + " --set controllers.vip.enabled=true",
        "ipam audit --controllers vip");

    JsonNode eips = section(report, "k8s-eip-operator");
    String forced = "kubectl apply --server-side --force-conflicts -f ipam-operators/crds/eips.materialize.cloud-v1.yml";
    assertThat(fixes(eips)).containsExactly(forced);
    assertThat(texts(eips, "adopted")).containsExactly("Eip shop/web: Elastic IP eipalloc-0123 (203.0.113.7) kept,"
        + " found again by its UID tag; finalizers [eip.materialize.cloud/destroy] kept");
    assertThat(texts(eips, "steps")).contains(forced, "helm upgrade --install ipam ipam-operators-1.0.tgz -n"
        + " ipam-operators --create-namespace --reuse-values --set controllers.eip.enabled=true"
        + " --set controllers.eip.settings.clusterName=test --set controllers.eip.settings.awsRegion=me-south-1");

    IpamRun text = IpamRun.of("migrate", "--kubeconfig", kubeconfig.toString());
    System.out.println("ipam migrate:\n" + text.out());
    assertThat(text.exit()).isEqualTo(1);
    assertThat(text.out()).contains("  BLOCKER: Deployment"
        + " egressip-ipam-operator/egressip-ipam-operator-controller-manager still runs 1 replica(s)", "    1. " + scale);

    // The fixes, as the report words them: nothing blocks any more, and the report says so with exit 0.
    admin.apps().deployments().inNamespace("egressip-ipam-operator")
        .withName("egressip-ipam-operator-controller-manager").scale(0);
    admin.genericKubernetesResources(context("redhatcop.redhat.io", "v1alpha1", "EgressIPAM", "egressipams"))
        .withName("overlapping").delete();
    GenericKubernetesResource sample = admin.genericKubernetesResources(context("paas.org", "v1", "IPGroup", "ipgroups"))
        .withName("ipgroup-sample").get();
    sample.getAdditionalProperties().put("spec", Map.of("segment", "198.51.100.0/24", "excludedIPs", List.of()));
    admin.resource(sample).update();
    // The hand-over steps as kubectl sends them: a server-side apply by field manager "kubectl". Without
    // --force-conflicts it is refused, also where the old CRD was only created (as the report says).
    for (String file : List.of("eips.materialize.cloud-v1.yml", "egressipams.redhatcop.redhat.io-v1.yml")) {
      assertThatThrownBy(() -> kubectlApply(file, false)).as(file)
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
      kubectlApply(file, true);
    }
    IpamRun after = IpamRun.of("migrate", "--kubeconfig", kubeconfig.toString(), "-o", "json");
    JsonNode clean = JSON.readTree(after.out());
    assertThat(after.exit()).as(after.out()).isZero();
    assertThat(clean.path("blocked").asBoolean()).isFalse();
    for (String[] taken : List.of(new String[] {"k8s-eip-operator", "eips.materialize.cloud-v1.yml", "eip"},
        new String[] {"egressip-ipam-operator", "egressipams.redhatcop.redhat.io-v1.yml", "egressip"})) {
      assertThat(texts(section(clean, taken[0]), "steps")).as("ours now: nothing to hand over")
          .noneMatch(step -> step.contains(taken[1]))
          .contains("ipam audit --controllers " + taken[2]);
    }

    // Switched: our CRD for every kind we serve, the old-only IP kind and the old Deployments gone. Our CRDs keep
    // the old groups and kinds, yet nothing of the old operators is reported.
    for (String file : List.of("keepalivedgroups.redhatcop.redhat.io-v1.yml", "ipgroups.paas.org-v1.yml")) {
      kubectlApply(file, true);
    }
    admin.apiextensions().v1().customResourceDefinitions().withName("ips.paas.org").delete();
    admin.apps().deployments().inNamespace("egressip-ipam-operator").delete();
    admin.apps().deployments().inNamespace("eip").delete();
    await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> {
      IpamRun done = IpamRun.of("migrate", "--kubeconfig", kubeconfig.toString(), "-o", "json");
      assertThat(done.exit()).as(done.out()).isZero();
      for (JsonNode section : JSON.readTree(done.out()).path("operators")) {
        assertThat(section.path("installed").asBoolean()).as(section.toString()).isFalse();
      }
    });
  }

  private void kubectlApply(String file, boolean force) throws IOException {
    try (InputStream in = resource("META-INF/fabric8/" + file)) {
      CustomResourceDefinition ours = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
      var apply = admin.apiextensions().v1().customResourceDefinitions().resource(ours).fieldManager("kubectl");
      (force ? apply.forceConflicts() : apply).serverSideApply();
    }
  }

  private static JsonNode section(JsonNode report, String operator) {
    for (JsonNode s : report.path("operators")) {
      if (s.path("operator").asText().equals(operator)) {
        return s;
      }
    }
    throw new AssertionError("no section " + operator + " in " + report);
  }

  private static List<String> texts(JsonNode node, String field) {
    List<String> out = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(n -> out.add(n.path(field).asText()));
    } else {
      node.path(field).forEach(n -> out.add(n.asText()));
    }
    return out;
  }

  private static List<String> fixes(JsonNode section) {
    return texts(section.path("blockers"), "fix");
  }

  private void create(String resource, String namespace) throws IOException {
    try (InputStream in = resource(resource)) {
      for (HasMetadata o : admin.load(in).items()) {
        if (namespace != null) {
          o.getMetadata().setNamespace(namespace);
        }
        admin.resource(o).create();
      }
    }
  }

  private void deployment(String ns, String name, int replicas, String image, Map<String, String> env) {
    admin.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().withReplicas(replicas).withNewSelector().addToMatchLabels("app", name).endSelector()
        .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withNewSpec().addNewContainer()
        .withName("manager").withImage(image).withEnv(env.entrySet().stream().map(e ->
            new io.fabric8.kubernetes.api.model.EnvVar(e.getKey(), e.getValue(), null)).toList())
        .endContainer().endSpec().endTemplate().endSpec().build()).create();
  }

  private static GenericKubernetesResource generic(String apiVersion, String kind, String ns, String name,
      Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion(apiVersion);
    r.setKind(kind);
    r.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    r.getAdditionalProperties().put("spec", spec);
    return r;
  }

  private static ResourceDefinitionContext context(String group, String version, String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withKind(kind)
        .withPlural(plural).withNamespaced(kind.equals("KeepalivedGroup") || kind.equals("Eip")).build();
  }

  private static InputStream resource(String name) {
    InputStream in = MigrateIT.class.getClassLoader().getResourceAsStream(name);
    assertThat(in).as(name).isNotNull();
    return in;
  }
}
