package org.ipamoperators.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.cli.IpamRun;
import org.ipamoperators.testsupport.TestBinaries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ipam demo --exit} with the test environment's etcd and kube-apiserver: the three controllers run as a
 * child process against the throw-away cluster and each one's work is printed (egress IPs per namespace and their
 * OVN EgressIP objects, a LoadBalancer address, the rendered keepalived configuration); everything is removed.
 */
class DemoCommandIT {

  @Test
  void theDemoShowsWhatEachControllerDidAndLeavesNothing() {
    TestBinaries.fromEnvironment().kubernetesBinDir(); // fails with the setup hint when the binaries are missing
    IpamRun run = IpamRun.of("demo", "--exit");
    assertThat(run.exit()).as(run.toString()).isZero();
    // One egress IP per zone for each namespace: zone a from 192.0.2.0/28, zone b from 192.0.2.16/28.
    assertThat(run.out())
        .containsPattern("namespace team-a +egress IPs 192\\.0\\.2\\.([1-9]|1[0-4]),192\\.0\\.2\\.(1[7-9]|2\\d|30) +"
            + "EgressIP egressipam-team-a \\[192\\.0\\.2\\.")
        .containsPattern("namespace team-b +egress IPs 192\\.0\\.2\\.([1-9]|1[0-4]),192\\.0\\.2\\.(1[7-9]|2\\d|30) +"
            + "EgressIP egressipam-team-b \\[192\\.0\\.2\\.")
        .containsPattern("Service team-a/shop \\(LoadBalancer\\) got \\[198\\.51\\.100\\.\\d+\\]")
        .contains("DaemonSet team-b/edge created", "vrrp_instance", "203.0.113.80");
    Matcher kubeconfig = Pattern.compile("kubectl --kubeconfig (\\S+) ").matcher(run.out());
    assertThat(kubeconfig.find()).isTrue();
    assertThat(Path.of(kubeconfig.group(1))).as("the demo's directory is removed").doesNotExist();
  }

  @Test
  void withoutTheTestEnvironmentItNamesTheCommandThatPreparesIt(@TempDir Path empty) {
    DemoCommand demo = new DemoCommand();
    demo.environment = Map.of("IPAM_TEST_CACHE", empty.toString());
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(demo);
    cl.setErr(new PrintWriter(err));
    cl.setOut(new PrintWriter(new StringWriter()));
    assertThat(cl.execute("--exit")).isEqualTo(2);
    assertThat(err.toString()).contains("needs etcd, kube-apiserver and kubectl", "scripts/test-env.sh");
  }
}
