package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.keepalived.AttachRules;
import org.junit.jupiter.api.Test;

/**
 * The operator-wide default of who may attach to a KeepalivedGroup and what it announces: chart values under
 * {@code controllers.keepalived.trust}, {@code ipam operator} options, and the settings they make.
 */
class KeepalivedAttachOptionsTest {

  private static OperatorCommand parsed(String... args) {
    picocli.CommandLine cl = IpamCommand.commandLine();
    cl.parseArgs(args);
    return cl.getSubcommands().get("operator").getCommand();
  }

  @Test
  void byDefaultEveryNamespaceAndAddressAsKeepalivedOperatorDid() {
    var settings = parsed("operator", "--controllers", "keepalived").keepalivedSettings();
    assertThat(settings.attach()).isEqualTo(AttachRules.ANY);
    List<HasMetadata> plain = HelmChartTest.objects(HelmChartTest.template().set("controllers.egressip.enabled", false)
        .set("controllers.keepalived.enabled", true));
    assertThat(Manifests.operatorArgs(Manifests.one(plain, Deployment.class)))
        .noneMatch(a -> a.startsWith("--keepalived-service-namespaces") || a.startsWith("--keepalived-vip-cidrs"));
  }

  @Test
  void theStrictSettingReachesTheOperatorFromTheChart() {
    List<HasMetadata> objects = HelmChartTest.objects(HelmChartTest.template()
        .set("controllers.egressip.enabled", false).set("controllers.keepalived.enabled", true)
        .set("controllers.keepalived.trust.serviceNamespaces[0]", "@group")
        .set("controllers.keepalived.trust.serviceNamespaces[1]", "shared")
        .set("controllers.keepalived.trust.vipCIDRs[0]", "192.0.2.0/24")
        .set("controllers.keepalived.trust.vipCIDRs[1]", "2001:db8::/64"));
    List<String> args = Manifests.operatorArgs(Manifests.one(objects, Deployment.class));
    assertThat(args).contains("--keepalived-service-namespaces=@group,shared",
        "--keepalived-vip-cidrs=192.0.2.0/24,2001:db8::/64");
    OperatorCommand cmd = new OperatorCommand();
    new picocli.CommandLine(cmd).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
    AttachRules attach = cmd.keepalivedSettings().attach();
    assertThat(attach.namespaces()).containsExactlyInAnyOrder(AttachRules.GROUP_NAMESPACE, "shared");
    assertThat(attach.cidrs()).containsExactly(IpRange.parse("192.0.2.0/24"), IpRange.parse("2001:db8::/64"));
  }

  @Test
  void theGroupTokenIsAValueNotAnArgumentFile() {
    // picocli reads "@name" arguments as files; no file of that name exists, so the value stays as written.
    var settings = parsed("operator", "--controllers", "keepalived",
        "--keepalived-service-namespaces", "@group", "--keepalived-vip-cidrs", "198.51.100.10-198.51.100.20")
        .keepalivedSettings();
    assertThat(settings.attach().namespaces()).containsExactly(AttachRules.GROUP_NAMESPACE);
    assertThat(settings.attach().cidrs()).containsExactly(IpRange.parse("198.51.100.10-198.51.100.20"));
  }

  @Test
  void aBadCidrOrNamespaceIsBadInput() {
    IpamRun cidr = IpamRun.of("operator", "--controllers", "keepalived", "--keepalived-vip-cidrs", "192.0.2.1/24");
    assertThat(cidr.exit()).isEqualTo(2);
    assertThat(cidr.err()).contains("--keepalived-vip-cidrs", "did you mean 192.0.2.0/24");
    IpamRun ns = IpamRun.of("operator", "--controllers", "keepalived", "--keepalived-service-namespaces", "Team_A");
    assertThat(ns.exit()).isEqualTo(2);
    assertThat(ns.err()).contains("'Team_A' is not a namespace name");
  }
}
