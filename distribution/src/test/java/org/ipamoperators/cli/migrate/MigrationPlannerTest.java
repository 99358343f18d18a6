package org.ipamoperators.cli.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.cli.IpamRun;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.cli.migrate.Facts.Checked;
import org.ipamoperators.cli.migrate.Facts.Crd;
import org.ipamoperators.cli.migrate.Facts.Deployment;
import org.ipamoperators.cli.migrate.Facts.Found;
import org.ipamoperators.cli.migrate.Facts.Held;
import org.ipamoperators.cli.migrate.Facts.OurCrd;
import org.ipamoperators.cli.migrate.MigrationReport.Blocker;
import org.ipamoperators.cli.migrate.MigrationReport.Section;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

class MigrationPlannerTest {
  static final MigrationPlanner.Target TARGET =
      new MigrationPlanner.Target("ipam-operators-1.0.tgz", "ipam-operators/crds", "ipam", "ipam-operators");
  static final OurCrd OUR_EIP = new OurCrd("eips.materialize.cloud", "eips.materialize.cloud-v1.yml", List.of("v2", "v1"));
  static final OurCrd OUR_EGRESS =
      new OurCrd("egressipams.redhatcop.redhat.io", "egressipams.redhatcop.redhat.io-v1.yml", List.of("v1alpha1"));

  @Test
  void nothingFoundIsNotInstalled() {
    Section s = section(new Found(OldOperator.VIP, List.of(), List.of(), List.of(), Map.of(), List.of(), List.of()));
    assertThat(s.installed()).isFalse();
    assertThat(s.steps()).isEmpty();
    assertThat(s.blockers()).isEmpty();
  }

  @Test
  void aRunningOldOperatorBlocksAndIsScaledToZeroFirst() {
    Deployment d = new Deployment("egressip-ipam-operator", "egressip-ipam-operator-controller-manager", 1,
        List.of("registry.example/redhat-cop/egressip-ipam-operator:v1.2.4"), Map.of());
    Section s = section(egress(List.of(d), List.of()));
    String scale = "kubectl scale deploy/egressip-ipam-operator-controller-manager --replicas=0 -n egressip-ipam-operator";
    assertThat(s.blockers()).extracting(Blocker::fix).containsExactly(scale);
    assertThat(s.steps()).first().isEqualTo(scale);
    assertThat(s.steps()).last().isEqualTo("ipam audit --controllers egressip");
    assertThat(s.steps()).contains("helm upgrade --install ipam ipam-operators-1.0.tgz -n ipam-operators"
        + " --create-namespace --reuse-values --set controllers.egressip.enabled=true");
  }

  @Test
  void aScaledDownOldOperatorWithValidObjectsDoesNotBlock() {
    Deployment d = new Deployment("e", "egressip-ipam-operator-controller-manager", 0, List.of(), Map.of());
    Section s = section(egress(List.of(d), List.of(new Checked("EgressIPAM", "ok", List.of()))));
    assertThat(s.blockers()).isEmpty();
    assertThat(s.steps()).noneMatch(x -> x.startsWith("kubectl scale"));
    // created by a client-side apply: ours is applied forcing, which no operator undoes at its start
    assertThat(s.steps()).contains("tar xzf ipam-operators-1.0.tgz",
        "kubectl apply --server-side --force-conflicts -f ipam-operators/crds/egressipams.redhatcop.redhat.io-v1.yml");
  }

  @Test
  void anObjectTheControllerWouldRefuseBlocksWithItsProblem() {
    Section s = section(egress(List.of(), List.of(new Checked("EgressIPAM", "bad", List.of("overlaps")))));
    assertThat(s.blockers()).singleElement().satisfies(b -> {
      assertThat(b.problem()).contains("EgressIPAM bad would be refused").contains("overlaps");
      assertThat(b.fix()).contains("correct its spec");
    });
  }

  @Test
  void aCrdAppliedByTheOldOperatorsManagerNeedsForceConflicts() {
    Crd old = new Crd("eips.materialize.cloud", List.of("v1", "v2"), List.of("v2"), List.of("eip.materialize.cloud"), List.of());
    Section s = section(eip(old, Map.of("CLUSTER_NAME", "prod")));
    String apply = "kubectl apply --server-side --force-conflicts -f ipam-operators/crds/eips.materialize.cloud-v1.yml";
    assertThat(s.blockers()).singleElement().satisfies(b -> {
      assertThat(b.problem()).contains("field manager eip.materialize.cloud");
      assertThat(b.fix()).isEqualTo(apply);
    });
    assertThat(s.steps()).containsSubsequence("tar xzf ipam-operators-1.0.tgz", apply, "ipam audit --controllers eip");
  }

  @Test
  void aCrdOnlyKubectlAppliedIsAppliedWithoutForce() {
    Crd old = new Crd("eips.materialize.cloud", List.of("v2"), List.of("v2"), List.of("kubectl"), List.of());
    Section s = section(eip(old, Map.of("CLUSTER_NAME", "prod")));
    assertThat(s.blockers()).isEmpty();
    assertThat(s.steps()).contains("kubectl apply --server-side -f ipam-operators/crds/eips.materialize.cloud-v1.yml");
  }

  @Test
  void aStoredVersionOurCrdDoesNotServeBlocks() {
    Crd old = new Crd("eips.materialize.cloud", List.of("v1beta1"), List.of("v1beta1"), List.of("kubectl"), List.of());
    Section s = section(eip(old, Map.of("CLUSTER_NAME", "prod")));
    assertThat(s.blockers()).singleElement().satisfies(b -> {
      assertThat(b.problem()).contains("stored as v1beta1").contains("serves v2, v1");
      assertThat(b.fix()).contains("status.storedVersions");
    });
  }

  @Test
  void eipSettingsComeFromTheOldDeploymentAndAMissingClusterNameBlocks() {
    Crd old = new Crd("eips.materialize.cloud", List.of("v2"), List.of("v2"), List.of("kubectl"), List.of());
    Section s = section(eip(old, Map.of("CLUSTER_NAME", "prod", "AWS_REGION", "eu-west-1", "RUST_LOG", "debug")));
    assertThat(s.steps()).anySatisfy(x -> assertThat(x).startsWith("helm upgrade --install")
        .endsWith("--set controllers.eip.enabled=true --set controllers.eip.settings.clusterName=prod"
            + " --set controllers.eip.settings.awsRegion=eu-west-1"));
    Section missing = section(eip(old, Map.of()));
    assertThat(missing.blockers()).singleElement().satisfies(b ->
        assertThat(b.fix()).contains("--set controllers.eip.settings.clusterName="));
  }

  @Test
  void imagesTheKeepalivedGroupsNameAreAllowedByTheHelmStep() {
    Found f = new Found(OldOperator.KEEPALIVED, List.of(), List.of(),
        List.of(new Deployment("k", "keepalived-operator-controller-manager", 0, List.of(), Map.of())), Map.of(),
        List.of(), List.of(), List.of("registry.example/keepalived:2", "registry.example/ipfailover"));
    assertThat(section(f).steps()).contains("helm upgrade --install ipam ipam-operators-1.0.tgz -n ipam-operators"
        + " --create-namespace --reuse-values --set controllers.keepalived.enabled=true --set-json"
        + " 'controllers.keepalived.trust.allowedImages=[\"registry.example/ipfailover\",\"registry.example/keepalived:2\"]'");
  }

  @Test
  void adoptedListsWhatIsHeld() {
    Found f = new Found(OldOperator.EGRESSIP, List.of(), List.of(OUR_EGRESS),
        List.of(new Deployment("n", "egressip-ipam-operator", 0, List.of(), Map.of())), Map.of(),
        List.of(new Held("Namespace", "pay", "egress IPs 10.0.0.5 kept")), List.of());
    assertThat(section(f).adopted()).containsExactly("Namespace pay: egress IPs 10.0.0.5 kept");
  }

  @Test
  void objectChecksAreTheControllersOwn() {
    EgressIPAMSpec sample = new EgressIPAMSpec(List.of(new CIDRAssignment("10.0.160.0/19", "b", List.of("10.0.160.126"))),
        "zone", null, null, null, null);
    assertThat(ObjectChecks.egressIpam(sample)).isEmpty();
    EgressIPAMSpec overlapping = new EgressIPAMSpec(List.of(new CIDRAssignment("10.10.0.0/24", "a", null),
        new CIDRAssignment("10.10.0.0/25", "b", null)), "zone", null, null, null, null);
    assertThat(ObjectChecks.egressIpam(overlapping)).singleElement().asString().contains("overlaps");
    assertThat(ObjectChecks.ipGroup("g", new IPGroupSpec("192.0.2.0/24", List.of("198.51.100.1"), null, null, null,
        null, null, null))).singleElement().asString().contains("outside");
    assertThat(ObjectChecks.ipGroup("g", null)).containsExactly("spec is missing: give spec.segment or spec.cidrs");
  }

  @Test
  void oldDeploymentsAreKnownByNameOrImage() {
    assertThat(OldOperator.EIP.runs("eip-operator", List.of())).isTrue();
    assertThat(OldOperator.EIP.runs("x", List.of("materialize/k8s-eip-operator:v0.4.0"))).isTrue();
    assertThat(OldOperator.KEEPALIVED.runs("keepalived-operator-controller-manager", List.of())).isTrue();
    assertThat(OldOperator.VIP.runs("m", List.of("registry.example/paasteam324/vip-allocator-operator@sha256:ab"))).isTrue();
    assertThat(OldOperator.EIP.runs("ipam-eip", List.of("registry/ipam-operators/eip:1"))).isFalse();
    assertThat(OldOperator.EGRESSIP.runs("keepalived-operator", List.of())).isFalse();
  }

  @Test
  void anotherControllersHelmStepTurnsEgressipOffUnlessItsOldOperatorIsThereToo() {
    Found eip = eip(new Crd("eips.materialize.cloud", List.of("v2"), List.of("v2"), List.of(), List.of()),
        Map.of("CLUSTER_NAME", "prod"));
    Found noEgress = new Found(OldOperator.EGRESSIP, List.of(), List.of(), List.of(), Map.of(), List.of(), List.of());
    String alone = helm(MigrationPlanner.plan(List.of(noEgress, eip), TARGET), "eip");
    assertThat(alone).as("the chart enables egressip by default").endsWith(" --set controllers.egressip.enabled=false");
    Found egress = egress(List.of(), List.of());
    assertThat(helm(MigrationPlanner.plan(List.of(egress, eip), TARGET), "eip")).doesNotContain("egressip.enabled");
    assertThat(helm(MigrationPlanner.plan(List.of(egress, eip), TARGET), "egressip"))
        .endsWith("--set controllers.egressip.enabled=true");
  }

  /**
   * Each section's audit is its own controller's: until its own switch, another old operator's addresses and router
   * ids are claimed by no ledger, and a full audit would report each as an orphan.
   */
  @Test
  void eachSectionEndsWithAnAuditOfItsOwnControllerWhichIpamAuditKnows() {
    for (OldOperator op : OldOperator.values()) {
      Deployment d = new Deployment("ns", op.project(), 0, List.of(), Map.of("CLUSTER_NAME", "prod"));
      Section s = section(new Found(op, List.of(), List.of(), List.of(d), Map.of(), List.of(), List.of()));
      assertThat(s.steps()).as(op.project()).last().isEqualTo("ipam audit --controllers " + op.controller());
      assertThat(ClusterFacts.ALL).contains(op.controller());
    }
    IpamRun bad = IpamRun.of("audit", "--controllers", "egressip,keepalived-operator");
    assertThat(bad.exit()).as(bad.err()).isEqualTo(2);
    assertThat(bad.err()).contains("expected one of [egressip, vip, keepalived, eip]", "'keepalived-operator'");
  }

  private static String helm(MigrationReport report, String controller) {
    return report.sections().stream().filter(s -> s.controller().equals(controller)).findFirst().orElseThrow()
        .steps().stream().filter(x -> x.startsWith("helm ")).findFirst().orElseThrow();
  }

  private static Found egress(List<Deployment> d, List<Checked> checked) {
    Crd old = new Crd("egressipams.redhatcop.redhat.io", List.of("v1alpha1"), List.of("v1alpha1"), List.of(),
        List.of("kubectl-client-side-apply"));
    return new Found(OldOperator.EGRESSIP, List.of(old), List.of(OUR_EGRESS), d, Map.of("EgressIPAM", checked.size()),
        List.of(), checked);
  }

  private static Found eip(Crd old, Map<String, String> env) {
    return new Found(OldOperator.EIP, List.of(old), List.of(OUR_EIP),
        List.of(new Deployment("eip", "eip-operator", 0, List.of(), env)), Map.of("Eip", 0), List.of(), List.of());
  }

  private static Section section(Found f) {
    return MigrationPlanner.section(f, TARGET);
  }
}
