package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipStatus;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;

/** Pod mode on the real apiserver and moto: scenarios 1, 2, 4, 7, 8, 9, 10, 11, 21 and 23 of the acceptance list. */
class PodModeIT extends EipIT {

  private static Address only(List<Address> addresses) {
    assertThat(addresses).hasSize(1);
    return addresses.get(0);
  }

  @Test
  void staticPodEipIsAllocatedTaggedAssociatedAnnotatedAndNotAllocatedTwice() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    Eip e1 = world.eip("e1", EipSelector.pod("db-0"));
    world.start(server, moto, world.settings(Map.of("DEFAULT_TAGS", "{\"Stack\":\"mzcloud/test\"}")));

    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    Address a = only(world.addresses());
    assertThat(EipWorld.tags(a)).containsEntry(EipNames.TAG_UID, e1.getMetadata().getUid())
        .containsEntry(EipNames.TAG_NAME, "e1").containsEntry(EipNames.TAG_NAMESPACE, world.ns)
        .containsEntry(EipNames.TAG_CLUSTER, EipWorld.CLUSTER).containsEntry(EipNames.TAG_POD, "db-0")
        .containsEntry("Name", "eip-operator:" + EipWorld.CLUSTER + ":" + world.ns + ":e1")
        .containsEntry("Stack", "mzcloud/test");
    assertThat(a.networkInterfaceId()).isEqualTo(eni[0]);
    assertThat(a.privateIpAddress()).isEqualTo(eni[1]);
    EipStatus s = world.eip("e1").getStatus();
    assertThat(s.allocationId()).isEqualTo(a.allocationId());
    assertThat(s.publicIpAddress()).isEqualTo(a.publicIp());
    assertThat(s.eni()).isEqualTo(eni[0]);
    assertThat(s.privateIpAddress()).isEqualTo(eni[1]);
    assertThat(s.resourceId()).isEqualTo("db-0");
    assertThat(s.associationId()).isEqualTo(a.associationId());
    await().atMost(WAIT).untilAsserted(() -> assertThat(world.pod("db-0").getMetadata().getAnnotations())
        .containsEntry(EipNames.ALLOCATION_ID_ANNOTATION, a.allocationId())
        .containsEntry(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, a.publicIp()));

    // Resyncs (every 3 s here) check AWS and change nothing: no second address, no second association.
    long describes = world.count("DescribeAddresses");
    await().atMost(WAIT).until(() -> world.count("DescribeAddresses") >= describes + 2);
    assertThat(world.count("AllocateAddress")).isEqualTo(1);
    assertThat(world.count("AssociateAddress")).isEqualTo(1);
    assertThat(only(world.addresses()).associationId()).isEqualTo(a.associationId());
  }

  @Test
  void reCreatedPodOfTheSameNameOnAnotherNodeGetsTheSamePublicIpDetachedInBetween() {
    EipWorld.Host h1 = world.instance();
    EipWorld.Host h2 = world.instance();
    String[] eni1 = world.podEni(h1, 1);
    String[] eni2 = world.podEni(h2, 1);
    world.node("n1", h1, Map.of(), true);
    world.node("n2", h2, Map.of(), true);
    world.pod("db-0", "n1", eni1[1], EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("db-0"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    String publicIp = world.eip("e1").getStatus().publicIpAddress();

    world.kube.pods().withName("db-0").withGracePeriod(0).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.condition("e1", "Ready").getReason()).isEqualTo("PodNotFound");
      assertThat(world.eip("e1").getStatus().associationId()).isNull();
      assertThat(world.eip("e1").getStatus().resourceId()).isNull();
      assertThat(only(world.addresses()).associationId()).isNull();
    });

    world.pod("db-0", "n2", eni2[1], EipWorld.managed(), Map.of());
    await().atMost(WAIT).untilAsserted(() -> {
      Address a = only(world.addresses());
      assertThat(a.publicIp()).isEqualTo(publicIp);
      assertThat(a.networkInterfaceId()).isEqualTo(eni2[0]);
      assertThat(world.eip("e1").getStatus().eni()).isEqualTo(eni2[0]);
      assertThat(world.pod("db-0").getMetadata().getAnnotations())
          .containsEntry(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, publicIp);
    });
    assertThat(world.count("AllocateAddress")).isEqualTo(1);
  }

  @Test
  void pendingPodsAndPodsWithoutAnIpCostNoAssociationAndAreNeverHeldByAFinalizer() {
    world.pod("pending", null, null, EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("pending"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "PodPending".equals(world.condition("e1", "Ready").getReason()));
    assertThat(world.pod("pending").getMetadata().getFinalizers()).isNullOrEmpty();
    world.kube.pods().withName("pending").delete();
    await().atMost(WAIT).until(() -> world.pod("pending") == null);
    assertThat(world.count("AssociateAddress")).isZero();
    assertThat(world.count("DescribeInstances")).isZero();
  }

  @Test
  void theBranchEniOfSecurityGroupsForPodsIsUsedAndAMalformedAnnotationFallsBackWithAWarning() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("branch", "n1", eni[1], EipWorld.managed(),
        Map.of(EipNames.POD_ENI_ANNOTATION, "[{\"eniId\":\"" + eni[0] + "\",\"ifAddress\":\"02:00\"}]"));
    world.eip("e1", EipSelector.pod("branch"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    assertThat(only(world.addresses()).networkInterfaceId()).isEqualTo(eni[0]);
    assertThat(world.count("DescribeInstances")).isZero();

    String[] eni2 = world.podEni(host, 2);
    world.pod("bad", "n1", eni2[1], EipWorld.managed(), Map.of(EipNames.POD_ENI_ANNOTATION, "[{not json"));
    world.eip("e2", EipSelector.pod("bad"));
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e2", "Ready").getStatus()));
    assertThat(world.eip("e2").getStatus().eni()).isEqualTo(eni2[0]);
    assertThat(world.count("DescribeInstances")).isPositive();
    assertThat(world.events("Pod", "bad")).anyMatch(e -> e.startsWith("PodEniAnnotationInvalid"));
  }

  @Test
  void aNodeWithoutAnAwsProviderIdGetsAWarningAndNoInstanceLookup() {
    world.node("fargate", null, Map.of(), true);
    world.pod("p", "fargate", "10.0.1.200", EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("p"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "NotOnAws".equals(world.condition("e1", "Ready").getReason()));
    assertThat(world.events("Pod", "p")).anyMatch(e -> e.startsWith("NotOnAws: cannot resolve instance"));
    assertThat(world.count("DescribeInstances")).isZero();
    assertThat(world.count("AssociateAddress")).isZero();
  }

  @Test
  void aPodIpOnNoInterfaceOfItsInstanceIsReportedAsEniNotFound() {
    EipWorld.Host host = world.instance();
    world.node("n1", host, Map.of(), true);
    world.pod("overlay", "n1", "192.0.2.10", EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("overlay"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "EniNotFound".equals(world.condition("e1", "Ready").getReason()));
    assertThat(world.events("Pod", "overlay")).anyMatch(e -> e.contains("has no VPC address"));
    assertThat(world.count("AssociateAddress")).isZero();
  }

  @Test
  void deletingTheEipReleasesItsAddressRemovesTheFinalizerAndThePodsAnnotations() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("db-0"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    await().atMost(WAIT).until(() -> world.pod("db-0").getMetadata().getAnnotations() != null
        && world.pod("db-0").getMetadata().getAnnotations().containsKey(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION));

    world.kube.resources(Eip.class).withName("e1").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.eip("e1")).isNull();
      assertThat(world.addresses()).isEmpty();
      assertThat(world.pod("db-0").getMetadata().getAnnotations()).doesNotContainKeys(
          EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, EipNames.ALLOCATION_ID_ANNOTATION);
    });
  }

  @Test
  void changingTheSelectedPodMovesTheAddressAndTheAnnotations() {
    EipWorld.Host host = world.instance();
    String[] a = world.podEni(host, 1);
    String[] b = world.podEni(host, 2);
    world.node("n1", host, Map.of(), true);
    world.pod("a", "n1", a[1], EipWorld.managed(), Map.of());
    world.pod("b", "n1", b[1], EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("a"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus())
        && world.pod("a").getMetadata().getAnnotations() != null
        && world.pod("a").getMetadata().getAnnotations().containsKey(EipNames.ALLOCATION_ID_ANNOTATION));

    world.kube.resources(Eip.class).withName("e1").edit(e -> {
      e.setSpec(org.ipamoperators.eip.api.EipSpec.of(EipSelector.pod("b")));
      return e;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(only(world.addresses()).networkInterfaceId()).isEqualTo(b[0]);
      assertThat(world.eip("e1").getStatus().resourceId()).isEqualTo("b");
      assertThat(world.pod("b").getMetadata().getAnnotations()).containsKey(EipNames.ALLOCATION_ID_ANNOTATION);
      assertThat(world.pod("a").getMetadata().getAnnotations()).doesNotContainKey(EipNames.ALLOCATION_ID_ANNOTATION);
    });
  }

  @Test
  void manageFalseMeansNotManaged() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("p", "n1", eni[1], Map.of(EipNames.MANAGE_LABEL, "false"), Map.of());
    world.eip("e1", EipSelector.pod("p"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "PodNotManaged".equals(world.condition("e1", "Ready").getReason()));
    assertThat(world.count("AssociateAddress")).isZero();
    assertThat(only(world.addresses()).associationId()).isNull();
  }

  @Test
  void aDisassociationMadeOutsideIsRepairedWithinTheResyncInterval() {
    EipWorld.Host host = world.instance();
    String[] eni = world.podEni(host, 1);
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", eni[1], EipWorld.managed(), Map.of());
    world.eip("e1", EipSelector.pod("db-0"));
    world.start(server, moto);
    await().atMost(WAIT).until(() -> "True".equals(world.condition("e1", "Ready").getStatus()));
    Address a = only(world.addresses());

    long started = System.nanoTime();
    world.ec2.disassociateAddress(r -> r.associationId(a.associationId()));
    await().atMost(EipWorld.RESYNC.multipliedBy(3)).untilAsserted(() -> {
      Address now = only(world.addresses());
      assertThat(now.networkInterfaceId()).isEqualTo(eni[0]);
      assertThat(world.eip("e1").getStatus().associationId()).isEqualTo(now.associationId());
    });
    System.out.printf("drift repaired in %d ms (resync interval %s)%n",
        Duration.ofNanos(System.nanoTime() - started).toMillis(), EipWorld.RESYNC);
  }
}
