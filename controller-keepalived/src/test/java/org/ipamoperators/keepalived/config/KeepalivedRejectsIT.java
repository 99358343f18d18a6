package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The other side of {@link AllRenderedConfigsIT}: configurations keepalived 2.2.7 refuses are detected as such.
 * Each case starts from a configuration the renderer produced (which passes) and breaks it in one of the ways the
 * renderer is built to avoid, so each case also shows why the renderer does what it does.
 */
class KeepalivedRejectsIT {

  private static ConfigCheckNode checker;
  private static String dualStack;

  @BeforeAll
  static void start() {
    checker = new ConfigCheckNode();
    GroupSettings settings = GroupSettings.builder("keepalived", "vips").interfaceName("eth0").build();
    KeepalivedGroupModel model = InstancePlanner.plan(settings,
            List.of(ServiceVips.of("shop/web", "198.51.100.10", "2001:db8:100::10")),
            List.of(KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1")))
        .withRouterIds(Map.of("shop/web", 7)).model();
    dualStack = RenderedConfigs.render(KeepalivedRejectsIT.class, "base", model, "node-a").text();
  }

  @AfterAll
  static void stop() {
    if (checker != null) {
      checker.close();
    }
  }

  @Test
  void theUnbrokenConfigurationPasses() {
    ConfigCheck check = checker.check(dualStack);

    assertThat(check.valid()).as(check.output()).isTrue();
  }

  @Test
  void twoIpv4InstancesWithOneRouterIdOnAnInterface() {
    String second = ipv4Instance().replace("vrrp_instance shop/web {", "vrrp_instance shop/other {")
        .replace("198.51.100.10", "198.51.100.11");

    assertRejected(dualStack + "\n" + second, "both use VRID 7 with IPv4 on interface eth0");
  }

  @Test
  void ipv4AndIpv6VipsInOneVirtualIpaddressBlock() {
    String mixed = dualStack.replace("        198.51.100.10\n", "        198.51.100.10\n        2001:db8:100::99\n");

    assertRejected(mixed, "address family must match VRRP instance");
  }

  @Test
  void aFractionalAdvertIntervalWithVrrp2() {
    String v2 = dualStack.replaceFirst("    version 3\n", "    version 2\n");

    assertRejected(v2, "advertisement interval 0.100000s must be an integer");
  }

  @Test
  void authenticationWithVrrp3() {
    String auth = dualStack.replaceFirst("    advert_int 0.1\n",
        "    advert_int 0.1\n    authentication {\n        auth_type PASS\n        auth_pass secret\n    }\n");

    assertRejected(auth, "VRRP version 3 does not support authentication");
  }

  @Test
  void aPasswordOfMoreThanEightCharacters() {
    String auth = dualStack.replaceFirst("    version 3\n    priority 100\n    advert_int 0.1\n",
        "    version 2\n    priority 100\n    advert_int 1\n    authentication {\n        auth_type PASS\n"
            + "        auth_pass 123456789\n    }\n");

    assertRejected(auth, "Truncating auth_pass to 8 characters");
  }

  @Test
  void anInstanceWithoutVip() {
    String empty = dualStack.replace("        198.51.100.10\n", "");

    assertRejected(empty, "No VIP specified");
  }

  @Test
  void moreIpv6VipsInAnAdvertThanFitInAPacket() {
    String many = IntStream.rangeClosed(1, 100).mapToObj(i -> "        2001:db8:100::1:" + Integer.toHexString(i) + "\n")
        .collect(Collectors.joining());
    String tooMany = dualStack.replace("        2001:db8:100::10\n", many);

    assertRejected(tooMany, "exceeds maximum/space available in packet");
  }

  @Test
  void aUnicastSourceWithoutPeers() {
    String lonely = dualStack.replaceFirst("    advert_int 0.1\n",
        "    advert_int 0.1\n    unicast_src_ip 192.0.2.1\n    unicast_peer {\n    }\n");

    assertRejected(lonely, "without any unicast peers");
  }

  @Test
  void aHealthScriptWithoutScriptSecurity() {
    String script = "vrrp_script shop/web {\n    script \"/usr/bin/curl --silent http://127.0.0.1:31234/health\"\n}\n";
    String insecure = dualStack.replace("    enable_script_security\n    script_user root\n", "")
        .replaceFirst("\nvrrp_instance", "\n" + script + "\nvrrp_instance");

    assertRejected(insecure, "SECURITY VIOLATION");
  }

  @Test
  void anUnknownKeywordSuchAsAMistypedVerbatimLine() {
    String typo = dualStack.replaceFirst("    advert_int 0.1\n", "    advert_int 0.1\n    garp_master_dealy 1\n");

    assertRejected(typo, "Unknown keyword 'garp_master_dealy'");
  }

  @Test
  void anInterfaceTheNodeDoesNotHave() {
    checker.check(dualStack);
    String elsewhere = dualStack.replace("interface eth0", "interface eth7");

    ConfigCheck check = checker.checkAsIs(elsewhere);

    assertThat(check.valid()).as(check.output()).isFalse();
    assertThat(check.messages()).anyMatch(line -> line.contains("eth7"));
  }

  private static String ipv4Instance() {
    int start = dualStack.indexOf("vrrp_instance shop/web {");
    int end = dualStack.indexOf("vrrp_instance shop/web/ipv6 {");
    return dualStack.substring(start, end);
  }

  private static void assertRejected(String config, String expectedMessage) {
    ConfigCheck check = checker.check(config);

    assertThat(check.valid()).as("keepalived should refuse:%n%s", config).isFalse();
    assertThat(check.output()).contains(expectedMessage);
  }
}
