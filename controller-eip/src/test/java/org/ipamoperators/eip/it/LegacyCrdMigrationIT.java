package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.groups.Tuple;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagSpecification;

/**
 * The migration from k8s-eip-operator as README.md's "Migrating from k8s-eip-operator" documents it, on an apiserver
 * of its own that starts where the old operator leaves a cluster: its CRD (v1 and v2, v2 stored) applied
 * server-side by its field manager, as it does at every start, and Eips in both modes with its finalizers and
 * statuses. The README's {@code kubectl apply} is run as kubectl runs it: a server-side apply of each CRD file,
 * byte for byte, by field manager {@code kubectl}, forcing conflicts only when the command says
 * {@code --force-conflicts}.
 */
@MotoTest
class LegacyCrdMigrationIT {
  static final String OLD_MANAGER = "eip.materialize.cloud";
  static final String KUBECTL_MANAGER = "kubectl";
  static final String CRD = "eips.materialize.cloud";
  /** The CRD k8s-eip-operator 0.4.0 applies at start-up (see the resource's README). */
  static final String OLD_CRD = "legacy/eips.materialize.cloud-k8s-eip-operator-0.4.0.json";
  static final String V2 = "materialize.cloud/v2";
  static final String V1 = "materialize.cloud/v1";

  private KubeApiServer server;
  private KubernetesClient admin;
  private EipWorld world;
  private MotoServer moto;

  @BeforeEach
  void setUp(MotoServer moto) {
    this.moto = moto;
    server = KubeApiServer.startPrivate();
    admin = server.newClient();
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build())
        .create();
    applyOldCrd();
    world = new EipWorld(admin.adapt(NamespacedKubernetesClient.class).inNamespace("shop"), moto);
  }

  @AfterEach
  void tearDown() {
    try {
      if (world != null) {
        world.close();
      }
    } finally {
      admin.close();
      server.stop();
    }
  }

  /** What the old operator does at each start: a server-side apply of its CRD, unforced, as its field manager. */
  private void applyOldCrd() {
    Refusal refused = applyCrd(CRD, resource(OLD_CRD), OLD_MANAGER, false);
    assertThat(refused).as("the old operator's CRD apply").isNull();
  }

  /** Why the apiserver refused a request: its HTTP code and the Status message. */
  record Refusal(int code, String message) {}

  /**
   * The PATCH kubectl and kube-rs send for a server-side apply of a CRD: the document as written, field manager and
   * force as query parameters. Waits until the CRD is Established; returns the refusal, if any.
   */
  private Refusal applyCrd(String name, String document, String manager, boolean force) {
    String url = admin.getMasterUrl().toString().replaceAll("/$", "")
        + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name + "?fieldManager=" + manager
        + "&force=" + force;
    HttpClient http = admin.getHttpClient();
    HttpRequest request = http.newHttpRequestBuilder().uri(url)
        .method("PATCH", "application/apply-patch+yaml", document).build();
    HttpResponse<String> response = http.sendAsync(request, String.class).join();
    if (!response.isSuccessful()) {
      Status status = admin.getKubernetesSerialization().unmarshal(response.body(), Status.class);
      return new Refusal(response.code(), status.getMessage());
    }
    CrdInstaller.awaitEstablished(admin, name, CrdInstaller.ESTABLISH_TIMEOUT);
    return null;
  }

  @Test
  void onTheOldCrdOurFieldsArePrunedAndTheApplyWithoutForceConflictsIsRefused() {
    assertThat(probe()).as("the old schema drops what it does not know, silently").isEqualTo(Map.of());

    Map<String, Refusal> refused = kubectlApply("kubectl apply --server-side -f crds/");
    assertThat(refused).as("the apply conflicts with the old operator's field manager").containsOnlyKeys(CRD);
    assertThat(refused.get(CRD).code()).isEqualTo(409);
    assertThat(refused.get(CRD).message()).contains("conflict with \"" + OLD_MANAGER + "\"");
    System.out.println("kubectl apply --server-side -f crds/ on the old CRD: " + refused.get(CRD).message());
    assertThat(probe()).as("nothing applied: the old schema still prunes").isEqualTo(Map.of());
  }

  @Test
  void theReadmesMigrationStepsTakeOverTheOldCrdAndItsEipsWithNoAwsChange() throws IOException {
    OldCluster old = oldCluster();
    Map<String, Object> podEipBefore = eipAsStored("db");
    Map<String, Object> nodeEipBefore = eipAsStored("gw");
    assertThat(eipAsStored("legacy")).as("read as v2 through the old schema, podName is pruned")
        .extracting("spec").isEqualTo(Map.of());

    // Step 1 (old operator scaled to 0): it does not run here. Step 2, as written:
    String step = readmeApplyCommand();
    assertThat(kubectlApply(step)).as(step).isEmpty();

    await().atMost(EipIT.WAIT).untilAsserted(() -> assertThat(probe()).as("our schema is served: nothing pruned")
        .containsOnlyKeys("reclaimPolicy", "allocation", "conditions", "observedGeneration"));
    CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
    assertThat(crd.getSpec().getVersions()).extracting(v -> v.getName() + (v.getStorage() ? " stored" : "")
        + (v.getServed() ? " served" : "")).containsExactlyInAnyOrder("v2 stored served", "v1 served");
    assertThat(eipAsStored("db")).isEqualTo(podEipBefore);
    assertThat(eipAsStored("gw")).isEqualTo(nodeEipBefore);
    assertThat(eipAsStored("legacy")).as("lost when written: pruned by the old v2 schema on the way to storage")
        .extracting("spec").isEqualTo(Map.of());
    oldManagerKeepsNothingThatMatters(crd);

    // Step 3: our operator with the same CLUSTER_NAME.
    world.start(server, moto);
    await().atMost(EipIT.WAIT).untilAsserted(() -> {
      assertThat(world.condition("db", "Ready").getStatus()).isEqualTo("True");
      assertThat(world.condition("gw", "Ready").getStatus()).isEqualTo("True");
    });
    assertThat(world.addresses()).extracting(Address::allocationId, Address::associationId)
        .containsExactlyInAnyOrderElementsOf(old.associations());
    assertThat(world.eip("db").getStatus().associationId()).isEqualTo(old.pod().associationId());
    assertThat(world.eip("gw").getStatus().associationId()).isEqualTo(old.node().associationId());
    // The Eip the old schema emptied says so, and keeps its address (tagged with its UID) for the user to fix.
    await().atMost(EipIT.WAIT).untilAsserted(() -> {
      assertThat(world.condition("legacy", "Ready").getReason()).isEqualTo("InvalidSpec");
      assertThat(world.events("Eip", "legacy")).anyMatch(e -> e.startsWith("InvalidSpec: set spec.selector"));
    });
    assertThat(world.eip("legacy").getStatus().allocationId()).isEqualTo(old.v1().allocationId());
    eips().withName("legacy").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\":{\"selector\":{\"pod\":{\"podName\":\"db-1\"}}}}");
    await().atMost(EipIT.WAIT).untilAsserted(() -> {
      assertThat(world.condition("legacy", "Ready").getReason()).isEqualTo("PodNotFound");
      assertThat(world.eip("legacy").getStatus().allocationId()).isEqualTo(old.v1().allocationId());
    });
    for (String call : List.of("AllocateAddress", "AssociateAddress", "DisassociateAddress", "ReleaseAddress")) {
      assertThat(world.count(call)).as(call).isZero();
    }

    // Scaled up again, the old operator cannot put its schema back: its unforced apply now conflicts.
    Refusal again = applyCrd(CRD, resource(OLD_CRD), OLD_MANAGER, false);
    assertThat(again).isNotNull().extracting(Refusal::code).isEqualTo(409);
    System.out.println("the old operator's CRD apply after the migration: " + again.message());
  }

  /** .spec.versions is atomic: the forced apply took it whole (schemas, served, storage, subresources, columns). */
  private static void oldManagerKeepsNothingThatMatters(CustomResourceDefinition crd) {
    List<String> leftover = ownedBy(crd, OLD_MANAGER);
    System.out.println("fields the old manager still owns after the forced apply:\n  " + String.join("\n  ",
        leftover));
    assertThat(leftover).as("the old manager keeps only names it shares with ours, and two empty lists")
        .allMatch(p -> p.matches("f:spec\\.f:(group|scope|names\\.f:(kind|plural|singular|categories|shortNames))"));
    assertThat(crd.getSpec().getNames().getCategories()).isEmpty();
    assertThat(crd.getSpec().getNames().getShortNames()).isEmpty();
  }

  // --- the cluster as k8s-eip-operator leaves it -----------------------------------------------------------------

  record OldCluster(Address pod, Address node, Address v1) {
    List<Tuple> associations() {
      return List.of(tuple(pod.allocationId(), pod.associationId()),
          tuple(node.allocationId(), node.associationId()), tuple(v1.allocationId(), null));
    }
  }

  /** A pod-mode Eip on pod db-0 and a node-mode Eip on node n1, each with its address associated, tagged by UID. */
  private OldCluster oldCluster() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    Map<String, String> role = Map.of("role", "egress");
    world.node("n1", host, role, true);
    world.kube.nodes().withName(world.nodeName("n1")).edit(n -> {
      n.getMetadata().setFinalizers(List.of(EipNames.LEGACY_NODE_FINALIZER));
      n.getMetadata().getLabels().put(EipNames.READY_STATUS_LABEL, "true");
      return n;
    });
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());

    String podUid = oldEip("db", Map.of("pod", Map.of("podName", "db-0")));
    Address pod = oldAddress("db", podUid, EipNames.TAG_POD, "db-0");
    world.ec2.associateAddress(r -> r.allocationId(pod.allocationId()).networkInterfaceId(eni[0])
        .privateIpAddress(eni[1]));
    Address podAssociated = world.address(pod.allocationId());
    oldStatus("db", podAssociated, "db-0");
    world.kube.pods().withName("db-0").edit(p -> {
      p.getMetadata().setFinalizers(List.of(EipNames.LEGACY_POD_FINALIZERS.get(0)));
      p.getMetadata().setAnnotations(Map.of(EipNames.ALLOCATION_ID_ANNOTATION, pod.allocationId(),
          EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, pod.publicIp()));
      return p;
    });

    String nodeUid = oldEip("gw", Map.of("node", Map.of("selector", role)));
    Address node = oldAddress("gw", nodeUid, EipNames.TAG_NODE_SELECTOR, "{\"role\":\"egress\"}");
    world.ec2.associateAddress(r -> r.allocationId(node.allocationId()).instanceId(host.instanceId()));
    Address nodeAssociated = world.address(node.allocationId());
    assertThat(nodeAssociated.privateIpAddress()).isEqualTo(host.privateIp());
    oldStatus("gw", nodeAssociated, world.nodeName("n1"));
    return new OldCluster(podAssociated, nodeAssociated, v1Eip());
  }

  /**
   * An Eip written through v1 after the old operator's last start (its upgrade of v1 objects runs at start only),
   * with an address recorded in its status. The old v2 schema prunes its podName on the way to storage.
   */
  private Address v1Eip() {
    GenericKubernetesResource e = new GenericKubernetesResource();
    e.setApiVersion(V1);
    e.setKind("Eip");
    e.setMetadata(new ObjectMetaBuilder().withName("legacy").build());
    e.setAdditionalProperty("spec", Map.of("podName", "db-1"));
    String uid = world.kube.genericKubernetesResources(V1, "Eip").resource(e).create().getMetadata().getUid();
    Address a = oldAddress("legacy", uid, EipNames.TAG_POD, "db-1");
    world.kube.genericKubernetesResources(V1, "Eip").withName("legacy").subresource("status").patch(
        PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocationId\":\"" + a.allocationId()
            + "\",\"publicIpAddress\":\"" + a.publicIp() + "\"}}");
    return a;
  }

  /** An Eip as the old operator writes one: server-side applied v2 spec, then its finalizer. Returns the UID. */
  private String oldEip(String name, Map<String, Object> selector) {
    GenericKubernetesResource e = new GenericKubernetesResource();
    e.setApiVersion(V2);
    e.setKind("Eip");
    e.setMetadata(new ObjectMetaBuilder().withName(name).build());
    e.setAdditionalProperty("spec", Map.of("selector", selector));
    eips().resource(e).fieldManager(OLD_MANAGER).serverSideApply();
    return eips().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":[\"" + EipNames.EIP_FINALIZER + "\"]}}").getMetadata().getUid();
  }

  private Address oldAddress(String name, String uid, String targetTag, String target) {
    List<Tag> tags = List.of(tag(EipNames.TAG_UID, uid), tag(EipNames.TAG_NAME, name),
        tag(EipNames.TAG_NAMESPACE, world.ns), tag(EipNames.TAG_CLUSTER, EipWorld.CLUSTER), tag(targetTag, target),
        tag("Name", "eip-operator:" + EipWorld.CLUSTER + ":" + world.ns + ":" + name));
    String id = world.ec2.allocateAddress(r -> r.domain(DomainType.VPC).tagSpecifications(TagSpecification.builder()
        .resourceType(ResourceType.ELASTIC_IP).tags(tags).build())).allocationId();
    return world.address(id);
  }

  private static Tag tag(String k, String v) {
    return Tag.builder().key(k).value(v).build();
  }

  private void oldStatus(String name, Address a, String resourceId) {
    eips().withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"status\":{\"allocationId\":\"" + a.allocationId() + "\",\"publicIpAddress\":\"" + a.publicIp()
            + "\",\"eni\":\"" + a.networkInterfaceId() + "\",\"privateIpAddress\":\"" + a.privateIpAddress()
            + "\",\"resourceId\":\"" + resourceId + "\",\"associationId\":\"" + a.associationId() + "\"}}");
  }

  // --- what the schema keeps ----------------------------------------------------------------------------------------

  private MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList,
      Resource<GenericKubernetesResource>> eips() {
    return world.kube.genericKubernetesResources(V2, "Eip");
  }

  /**
   * Writes our fields on a throwaway Eip (spec: reclaimPolicy, allocation; status: conditions, observedGeneration),
   * reads it back and returns those of them that survived.
   */
  private Map<String, Object> probe() {
    GenericKubernetesResource e = new GenericKubernetesResource();
    e.setApiVersion(V2);
    e.setKind("Eip");
    e.setMetadata(new ObjectMetaBuilder().withName("probe").build());
    e.setAdditionalProperty("spec", Map.of("selector", Map.of("pod", Map.of("podName", "nobody")),
        "reclaimPolicy", "Retain", "allocation", Map.of("adoptTags", Map.of("team", "payments"))));
    eips().resource(e).create();
    eips().withName("probe").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"status\":{\"observedGeneration\":1,\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
            + "\"reason\":\"PodNotFound\",\"message\":\"probe\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}");
    GenericKubernetesResource read = eips().withName("probe").get();
    eips().withName("probe").delete();
    await().atMost(EipIT.WAIT).until(() -> eips().withName("probe").get() == null);
    Map<String, Object> kept = new TreeMap<>();
    Map<?, ?> spec = (Map<?, ?>) read.getAdditionalProperties().get("spec");
    Map<?, ?> status = (Map<?, ?>) read.getAdditionalProperties().getOrDefault("status", Map.of());
    for (String k : List.of("reclaimPolicy", "allocation")) {
      if (spec.containsKey(k)) {
        kept.put(k, spec.get(k));
      }
    }
    for (String k : List.of("conditions", "observedGeneration")) {
      if (status.containsKey(k)) {
        kept.put(k, status.get(k));
      }
    }
    return kept;
  }

  /** The Eip as stored, but for its managedFields (bookkeeping, not content). */
  private Map<String, Object> eipAsStored(String name) {
    GenericKubernetesResource e = eips().withName(name).get();
    e.getMetadata().setManagedFields(null);
    return world.kube.getKubernetesSerialization().convertValue(e, Map.class);
  }

  /** Paths of the fields {@code manager} owns on the object, one per owned leaf, in fieldsV1 notation. */
  static List<String> ownedBy(HasMetadata object, String manager) {
    List<String> paths = new ArrayList<>();
    for (ManagedFieldsEntry m : object.getMetadata().getManagedFields()) {
      if (manager.equals(m.getManager())) {
        leaves("", m.getFieldsV1().getAdditionalProperties(), paths);
      }
    }
    return paths;
  }

  private static void leaves(String prefix, Map<?, ?> node, List<String> out) {
    for (Map.Entry<?, ?> e : node.entrySet()) {
      String key = (String) e.getKey();
      Map<?, ?> child = (Map<?, ?>) e.getValue();
      if (".".equals(key)) {
        continue;
      }
      String path = prefix.isEmpty() ? key : prefix + "." + key;
      if (child.isEmpty()) {
        out.add(path);
      } else {
        leaves(path, child, out);
      }
    }
  }

  // --- the README's kubectl apply, run as kubectl runs it -----------------------------------------------------------

  /** The one {@code kubectl apply ... -f crds/} of README.md's migration section, exactly as written there. */
  static String readmeApplyCommand() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int start = readme.indexOf("## Migrating from k8s-eip-operator");
    assertThat(start).as("README.md has the migration section").isNotNegative();
    int end = readme.indexOf("\n## ", start + 1);
    String section = readme.substring(start, end < 0 ? readme.length() : end);
    Matcher m = Pattern.compile("`(kubectl apply [^`]*-f crds/)`").matcher(section);
    List<String> found = new ArrayList<>();
    while (m.find()) {
      found.add(m.group(1));
    }
    assertThat(found).as("one kubectl apply of crds/ in the migration section").hasSize(1);
    return found.get(0);
  }

  /**
   * Runs {@code kubectl apply --server-side [--force-conflicts] -f crds/} on controller-eip's CRDs (those of
   * {@link EipIT}'s {@code @KubeApiTest}, as the chart's {@code crds/} ships them): each file as kubectl sends it.
   * Returns the refusals by CRD name; an option this method does not know fails the test.
   */
  private Map<String, Refusal> kubectlApply(String command) {
    List<String> words = List.of(command.trim().split("\\s+"));
    assertThat(words.subList(0, 2)).isEqualTo(List.of("kubectl", "apply"));
    boolean serverSide = false;
    boolean force = false;
    String dir = null;
    for (int i = 2; i < words.size(); i++) {
      switch (words.get(i)) {
        case "--server-side" -> serverSide = true;
        case "--force-conflicts" -> force = true;
        case "-f" -> dir = words.get(++i);
        default -> throw new AssertionError("the test does not know what " + words.get(i) + " does in: " + command);
      }
    }
    assertThat(serverSide).as("a client-side apply is not what this test runs: " + command).isTrue();
    assertThat(dir).isEqualTo("crds/");
    Map<String, Refusal> refused = new TreeMap<>();
    for (String file : EipIT.class.getAnnotation(KubeApiTest.class).crds()) {
      String name = file.substring(file.lastIndexOf('/') + 1, file.lastIndexOf('-'));
      Refusal r = applyCrd(name, resource(file), KUBECTL_MANAGER, force);
      if (r != null) {
        refused.put(name, r);
      }
    }
    return refused;
  }

  private static String resource(String name) {
    try (InputStream in = LegacyCrdMigrationIT.class.getClassLoader().getResourceAsStream(name)) {
      assertThat(in).as(name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
