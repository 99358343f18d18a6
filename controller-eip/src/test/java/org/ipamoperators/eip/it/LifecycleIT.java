package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.Operator;
import java.util.List;
import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipV1;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagSpecification;

/**
 * Allocation and ownership across restarts and takeovers: scenarios 2 (crash after AllocateAddress), 3, 5, 6, 18, 19,
 * 20, the takeover of a cluster the old operator ran, and per-object AWS failures.
 */
class LifecycleIT extends EipIT {

  /** An address as the old operator allocated it for an Eip: its tags, UID included. */
  private Address oldOperatorsAddress(Eip eip, String podName, String cluster) {
    List<Tag> tags = List.of(tag(EipNames.TAG_UID, eip.getMetadata().getUid()),
        tag(EipNames.TAG_NAME, eip.getMetadata().getName()), tag(EipNames.TAG_NAMESPACE, world.ns),
        tag(EipNames.TAG_CLUSTER, cluster), tag(EipNames.TAG_POD, podName),
        tag("Name", "eip-operator:" + cluster + ":" + world.ns + ":" + eip.getMetadata().getName()));
    String id = world.ec2.allocateAddress(r -> r.domain(DomainType.VPC).tagSpecifications(TagSpecification.builder()
        .resourceType(ResourceType.ELASTIC_IP).tags(tags).build())).allocationId();
    return world.address(id);
  }

  private static Tag tag(String k, String v) {
    return Tag.builder().key(k).value(v).build();
  }

  @Test
  void anOperatorDyingBetweenAllocateAddressAndTheStatusWriteLeavesOneAddressWhichTheNextOneKeeps() {
    world.pod("p", null, null, EipWorld.managed(), Map.of());
    world.crashAfter.put("AllocateAddress", "die");
    Operator first = world.start(server, moto);
    world.eip("e1", EipSelector.pod("p"));
    await().atMost(WAIT).until(() -> world.count("AllocateAddress") == 1);
    first.stop();
    assertThat(world.eip("e1").getStatus() == null || world.eip("e1").getStatus().allocationId() == null)
        .as("the status write never happened").isTrue();
    assertThat(world.addresses()).hasSize(1);
    String allocated = world.addresses().get(0).allocationId();

    world.start(server, moto);
    await().atMost(WAIT).until(() -> world.eip("e1").getStatus() != null
        && allocated.equals(world.eip("e1").getStatus().allocationId()));
    assertThat(world.count("AllocateAddress")).isEqualTo(1);
    assertThat(world.addresses()).hasSize(1);

    // Deleting the Eip afterwards leaks nothing.
    world.kube.resources(Eip.class).withName("e1").delete();
    await().atMost(WAIT).until(() -> world.addresses().isEmpty() && world.eip("e1") == null);
  }

  /** EC2's tag index lagging, or tags removed by hand: the status's allocation id still finds the address. */
  @Test
  void anAddressWhoseTagsWentMissingIsTakenBackByTheAllocationIdInTheStatus() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    Eip e1 = world.eip("e1", EipSelector.pod("db-0"));
    Operator first = world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    Address before = world.addresses().get(0);
    first.stop();

    List<Tag> ours = before.tags().stream().filter(t -> t.key().startsWith("eip.materialize.cloud/")).toList();
    world.ec2.deleteTags(r -> r.resources(before.allocationId()).tags(ours));
    assertThat(world.ec2.describeAddresses(r -> r.filters(f -> f.name("tag:" + EipNames.TAG_UID)
        .values(e1.getMetadata().getUid()))).addresses()).isEmpty();

    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.events("Eip", "e1")).anyMatch(e -> e.startsWith("AddressRetagged: " + before.publicIp()));
      assertThat(EipWorld.tags(world.address(before.allocationId())))
          .containsEntry(EipNames.TAG_UID, e1.getMetadata().getUid()).containsEntry(EipNames.TAG_POD, "db-0");
      assertThat(world.condition("e1", "Ready").getStatus()).isEqualTo("True");
    });
    assertThat(world.addresses()).extracting(Address::allocationId).containsExactly(before.allocationId());
    assertThat(world.addresses().get(0).associationId()).isEqualTo(before.associationId());
    assertThat(world.eip("e1").getStatus().publicIpAddress()).isEqualTo(before.publicIp());
    assertThat(world.count("AllocateAddress")).isEqualTo(1);
  }

  @Test
  void duplicateTaggedAddressesAreRepairedKeepingTheAssociatedOneWithAnEvent() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    Eip e1 = world.eip("e1", EipSelector.pod("db-0"));
    Address first = oldOperatorsAddress(e1, "db-0", EipWorld.CLUSTER);
    Address second = oldOperatorsAddress(e1, "db-0", EipWorld.CLUSTER);
    world.ec2.associateAddress(r -> r.allocationId(second.allocationId()).networkInterfaceId(eni[0])
        .privateIpAddress(eni[1]));
    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.addresses()).extracting(Address::allocationId).containsExactly(second.allocationId());
      assertThat(world.condition("e1", "Ready").getStatus()).isEqualTo("True");
      assertThat(world.events("Eip", "e1")).anyMatch(e -> e.startsWith("DuplicateAddressReleased: released "
          + first.publicIp()));
    });
    assertThat(world.count("AllocateAddress")).isZero();
  }

  @Test
  void autocreateGivesAPodItsOwnEipReleasedWhenThePodGoes() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.start(server, moto);
    world.pod("web-7f9c", "n1", eni[1], Map.of(EipNames.MANAGE_LABEL, "true", EipNames.AUTOCREATE_LABEL, "True"),
        Map.of());
    await().atMost(WAIT).untilAsserted(() -> {
      Eip e = world.eip("web-7f9c");
      assertThat(e).isNotNull();
      assertThat(e.getMetadata().getLabels()).containsEntry(EipNames.AUTOCREATED_LABEL, "true");
      assertThat(e.getMetadata().getOwnerReferences()).singleElement()
          .satisfies(o -> assertThat(o.getKind()).isEqualTo("Pod"));
      assertThat(world.condition("web-7f9c", "Ready").getStatus()).isEqualTo("True");
      assertThat(world.addresses()).singleElement().satisfies(a -> assertThat(a.privateIpAddress()).isEqualTo(eni[1]));
    });

    world.kube.pods().withName("web-7f9c").delete(); // graceful: terminating (no kubelet finishes it)
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.eip("web-7f9c")).isNull();
      assertThat(world.addresses()).isEmpty();
    });
  }

  @Test
  void aManualEipAndAnAutocreatedOneForOnePodTheManualOneWinsAndTheOtherSaysConflict() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    // The old operator's leftovers: an autocreated Eip (named after the pod) next to a manual one.
    world.pod("web-1", "n1", eni[1], Map.of(EipNames.MANAGE_LABEL, "true", EipNames.AUTOCREATE_LABEL, "true"),
        Map.of());
    world.eip("web-1", EipSelector.pod("web-1"));
    world.eip("manual", EipSelector.pod("web-1"));
    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.condition("manual", "Ready").getStatus()).isEqualTo("True");
      assertThat(world.condition("web-1", "Conflict").getStatus()).isEqualTo("True");
      assertThat(world.condition("web-1", "Conflict").getMessage()).contains("Eip manual also selects pod web-1");
      assertThat(world.eip("web-1").getStatus().associationId()).isNull();
    });
    String manualIp = world.eip("manual").getStatus().publicIpAddress();
    assertThat(world.addresses()).filteredOn(a -> a.associationId() != null).singleElement()
        .satisfies(a -> assertThat(a.publicIp()).isEqualTo(manualIp));

    // A new pod with autocreate that a manual Eip already selects gets no Eip, and an Event saying so.
    String[] eni2 = world.podEni(host, 2);
    world.eip("manual2", EipSelector.pod("web-2"));
    world.pod("web-2", "n1", eni2[1], Map.of(EipNames.MANAGE_LABEL, "true", EipNames.AUTOCREATE_LABEL, "true"),
        Map.of());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.events("Pod", "web-2")).anyMatch(e -> e.startsWith("Conflict: Eip manual2 already selects"));
      assertThat(world.condition("manual2", "Ready").getStatus()).isEqualTo("True");
    });
    assertThat(world.eip("web-2")).isNull();
  }

  @Test
  void thePeriodicSweepReleasesOnlyOurClustersAndNamespacesOrphans() {
    Eip live = world.eip("live", EipSelector.pod("nobody"));
    Eip ghost = new Eip();
    ghost.getMetadata().setName("ghost");
    ghost.getMetadata().setUid("00000000-dead-beef-0000-000000000000");
    Address orphan = oldOperatorsAddress(ghost, "p", EipWorld.CLUSTER);
    Address otherCluster = oldOperatorsAddress(ghost, "p", "other-cluster");
    String untagged = world.ec2.allocateAddress(r -> r.domain(DomainType.VPC)).allocationId();
    String otherNamespace = world.ec2.allocateAddress(r -> r.domain(DomainType.VPC).tagSpecifications(
        TagSpecification.builder().resourceType(ResourceType.ELASTIC_IP).tags(
            tag(EipNames.TAG_CLUSTER, EipWorld.CLUSTER), tag(EipNames.TAG_NAMESPACE, "elsewhere"),
            tag(EipNames.TAG_UID, "gone-too")).build())).allocationId();
    world.start(server, moto, world.settings(Map.of("NAMESPACE", world.ns)));

    await().atMost(WAIT).until(() -> world.addresses().stream().noneMatch(a -> a.allocationId()
        .equals(orphan.allocationId())));
    await().atMost(WAIT).until(() -> world.eip("live").getStatus() != null
        && world.eip("live").getStatus().allocationId() != null);
    assertThat(world.addresses()).extracting(Address::allocationId).contains(otherCluster.allocationId(), untagged,
        otherNamespace, world.eip("live").getStatus().allocationId());

    // Not only at start: an orphan made later goes at a later sweep.
    Address later = oldOperatorsAddress(ghost, "p", EipWorld.CLUSTER);
    await().atMost(WAIT).until(() -> world.addresses().stream().noneMatch(a -> a.allocationId()
        .equals(later.allocationId())));
    assertThat(world.addresses()).hasSize(4);
    assertThat(live.getMetadata().getUid()).isNotNull();
  }

  @Test
  void quotaExhaustionIsAConditionAnEventAndAMetricAndStallsNoOtherEip() {
    world.failNext.put("AllocateAddress", "AddressLimitExceeded");
    world.start(server, moto);
    world.eip("a", EipSelector.pod("pa"));
    world.eip("b", EipSelector.pod("pb"));
    await().atMost(WAIT).untilAsserted(() -> {
      long quota = List.of("a", "b").stream().filter(n -> "True".equals(world.condition(n, "QuotaExceeded")
          .getStatus())).count();
      long allocated = List.of("a", "b").stream().filter(n -> world.eip(n).getStatus() != null
          && world.eip(n).getStatus().allocationId() != null).count();
      assertThat(quota).isEqualTo(1);
      assertThat(allocated).isEqualTo(1);
    });
    String starved = "True".equals(world.condition("a", "QuotaExceeded").getStatus()) ? "a" : "b";
    assertThat(world.condition(starved, "QuotaExceeded").getMessage()).contains("of 5 addresses");
    assertThat(world.events("Eip", starved)).anyMatch(e -> e.startsWith("QuotaExceeded"));
    assertThat(world.registry.get("ipam.eip.allocate.failures").tag("reason", "AddressLimitExceeded").counter().count())
        .isEqualTo(1.0);
    await().atMost(WAIT).until(() -> world.registry.get("ipam.eip.quota").gauge().value() == 5.0);
    assertThat(world.registry.get("ipam.eip.allocated").gauge().value()).isEqualTo(1.0);
  }

  @Test
  void aStoredV1EipBecomesV2WithItsStatusAndAddressKept() {
    String crd = "eips.materialize.cloud";
    storageVersion(crd, "v1");
    EipV1 v1 = new EipV1();
    v1.getMetadata().setName("legacy");
    v1.setSpec(new EipV1.Spec("db-0"));
    v1 = world.kube.resource(v1).create();
    Eip asV2 = world.eip("legacy");
    Address address = oldOperatorsAddress(asV2, "db-0", EipWorld.CLUSTER);
    GenericKubernetesResource status = world.kube.genericKubernetesResources("materialize.cloud/v1", "Eip")
        .withName("legacy").get();
    status.setAdditionalProperty("status", Map.of("allocationId", address.allocationId(), "publicIpAddress",
        address.publicIp()));
    world.kube.genericKubernetesResources("materialize.cloud/v1", "Eip").resource(status).updateStatus();
    storageVersion(crd, "v2");
    assertThat(world.eip("legacy").getSpec().podName()).as("a v1 object read as v2 keeps podName").isEqualTo("db-0");

    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      Eip e = world.eip("legacy");
      assertThat(e.getSpec().selector()).isEqualTo(EipSelector.pod("db-0"));
      assertThat(e.getSpec().podName()).isNull();
      assertThat(e.getStatus().allocationId()).isEqualTo(address.allocationId());
      assertThat(e.getStatus().publicIpAddress()).isEqualTo(address.publicIp());
      assertThat(world.condition("legacy", "Ready").getReason()).isEqualTo("PodNotFound");
    });
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(world.kube.resources(EipV1.class).withName("legacy").get()).isNotNull();
  }

  private void storageVersion(String crd, String version) {
    CustomResourceDefinition def = world.kube.apiextensions().v1().customResourceDefinitions().withName(crd).get();
    def.getSpec().getVersions().forEach(v -> v.setStorage(v.getName().equals(version)));
    def.getMetadata().setManagedFields(null);
    world.kube.apiextensions().v1().customResourceDefinitions().resource(def).update();
  }

  @Test
  void aClusterTheOldOperatorRanIsTakenOverWithNothingAllocatedMovedOrReleased() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    Eip e1 = world.eip("e1", EipSelector.pod("db-0"));
    Address a = oldOperatorsAddress(e1, "db-0", EipWorld.CLUSTER);
    String association = world.ec2.associateAddress(r -> r.allocationId(a.allocationId()).networkInterfaceId(eni[0])
        .privateIpAddress(eni[1]).allowReassociation(true)).associationId();
    // What the old operator wrote: Eip finalizer and status, pod finalizer and annotations.
    world.kube.resources(Eip.class).withName("e1").edit(e -> {
      e.getMetadata().setFinalizers(List.of(EipNames.EIP_FINALIZER));
      return e;
    });
    world.kube.resources(Eip.class).withName("e1").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"status\":{\"allocationId\":\"" + a.allocationId() + "\",\"publicIpAddress\":\"" + a.publicIp()
            + "\",\"eni\":\"" + eni[0] + "\",\"privateIpAddress\":\"" + eni[1]
            + "\",\"resourceId\":\"db-0\",\"associationId\":\"" + association + "\"}}");
    world.kube.pods().withName("db-0").edit(p -> {
      p.getMetadata().setFinalizers(List.of("eip.materialize.cloud/disassociate"));
      p.getMetadata().setAnnotations(Map.of(EipNames.ALLOCATION_ID_ANNOTATION, a.allocationId(),
          EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, a.publicIp()));
      return p;
    });

    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    assertThat(world.addresses()).singleElement().satisfies(x -> {
      assertThat(x.allocationId()).isEqualTo(a.allocationId());
      assertThat(x.associationId()).isEqualTo(association);
    });
    assertThat(world.eip("e1").getStatus().associationId()).isEqualTo(association);
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(world.count("AssociateAddress")).isZero();
    assertThat(world.count("ReleaseAddress")).isZero();

    // The old pod finalizer does not hold the pod: it goes once the address is disassociated.
    world.kube.pods().withName("db-0").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.pod("db-0") == null || world.pod("db-0").getMetadata().getFinalizers().isEmpty()).isTrue();
      assertThat(world.addresses()).singleElement().satisfies(x -> assertThat(x.associationId()).isNull());
    });
    assertThat(world.count("ReleaseAddress")).isZero();
  }

  @Test
  void anExistingAddressIsAdoptedByTagsOnceAndRetainedUntaggedWhenTheEipGoes() {
    String adoptable = world.ec2.allocateAddress(r -> r.domain(DomainType.VPC).tagSpecifications(
        TagSpecification.builder().resourceType(ResourceType.ELASTIC_IP).tags(tag("team", "payments")).build()))
        .allocationId();
    world.start(server, moto);
    org.ipamoperators.eip.api.EipSpec spec = new org.ipamoperators.eip.api.EipSpec(null, EipSelector.pod("p"),
        org.ipamoperators.eip.api.EipSpec.ReclaimPolicy.Retain,
        new org.ipamoperators.eip.api.EipAllocation(null, Map.of("team", "payments")));
    world.eip("one", spec);
    world.eip("two", spec); // the same filter: one Eip adopts the address, the other waits and says why
    java.util.concurrent.atomic.AtomicReference<String> winner = new java.util.concurrent.atomic.AtomicReference<>();
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
      String w = adoptable.equals(world.eip("one").getStatus().allocationId()) ? "one" : "two";
      String loser = w.equals("one") ? "two" : "one";
      assertThat(world.eip(w).getStatus().allocationId()).isEqualTo(adoptable);
      assertThat(world.condition(loser, "Ready").getReason()).isEqualTo("NoAddressToAdopt");
      winner.set(w);
    });
    String loser = winner.get().equals("one") ? "two" : "one";
    assertThat(EipWorld.tags(world.address(adoptable))).containsEntry(EipNames.TAG_UID,
        world.eip(winner.get()).getMetadata().getUid()).containsEntry("team", "payments");
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(world.events("Eip", winner.get())).anyMatch(e -> e.startsWith("AddressAdopted"));

    world.kube.resources(Eip.class).withName(winner.get()).delete();
    await().atMost(WAIT).until(() -> world.eip(winner.get()) == null);
    // Retained (not released); the loser, retrying, adopts it now that it is free.
    await().atMost(WAIT).until(() -> world.eip(loser).getStatus() != null
        && adoptable.equals(world.eip(loser).getStatus().allocationId()));
    assertThat(EipWorld.tags(world.address(adoptable))).containsEntry("team", "payments")
        .containsEntry(EipNames.TAG_UID, world.eip(loser).getMetadata().getUid());
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(world.count("ReleaseAddress")).isZero();
  }
}
