package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.keepalived.reloader.VrrpInstanceState.State;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parsing keepalived's SIGUSR1 data dump. The samples are real dumps of keepalived 2.2.7 (Debian bookworm), one per
 * node of a two-node pair in network namespaces: node-a is MASTER of every instance; on node-b the instance whose
 * track_script fails is FAULT and the others are BACKUP. The instances are multicast IPv4, IPv6 (same VRID as its
 * IPv4 twin, as the renderer plans dual-stack services) and unicast.
 */
class VrrpStatesTest {

  private static String sample(String name) throws IOException {
    try (InputStream in = VrrpStatesTest.class.getResourceAsStream(name)) {
      assertThat(in).as(name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static VrrpInstanceState instance(String name, State state, int vrid) {
    return new VrrpInstanceState(name, state, vrid, Optional.of("eth0"));
  }

  @Test
  void theMastersDumpListsEveryInstanceAsMaster() throws IOException {
    assertThat(VrrpStates.parse(sample("keepalived-2.2.7-node-a.data"))).hasValue(List.of(
        instance("shop/api", State.MASTER, 2),
        instance("shop/web", State.MASTER, 42),
        instance("shop/web/ipv6", State.MASTER, 42),
        instance("shop/uni", State.MASTER, 7)));
  }

  @Test
  void theBackupsDumpHasBackupAndFaultInstances() throws IOException {
    // The dump's VRRP Scripts and Interfaces sections also have "State =" and "Interface =" lines: not instances.
    assertThat(VrrpStates.parse(sample("keepalived-2.2.7-node-b.data"))).hasValue(List.of(
        instance("shop/api", State.FAULT, 2),
        instance("shop/web", State.BACKUP, 42),
        instance("shop/web/ipv6", State.BACKUP, 42),
        instance("shop/uni", State.BACKUP, 7)));
  }

  @Test
  void aDumpCutBeforeTheNextSectionIsNotComplete() throws IOException {
    String dump = sample("keepalived-2.2.7-node-b.data");
    int sockpool = dump.indexOf("------< VRRP Sockpool >------");
    assertThat(sockpool).isPositive();
    // keepalived writes the file in pieces: a reader may see it up to any byte.
    assertThat(VrrpStates.parse(dump.substring(0, sockpool))).isEmpty();
    assertThat(VrrpStates.parse(dump.substring(0, dump.indexOf(" VRRP Instance = shop/uni")))).isEmpty();
    assertThat(VrrpStates.parse(dump.substring(0, dump.indexOf("------< VRRP Topology")))).isEmpty();
    assertThat(VrrpStates.parse("")).isEmpty();
    assertThat(VrrpStates.parse(dump.substring(0, sockpool + "------< VRRP Sockpool >------\n".length())))
        .hasValueSatisfying(list -> assertThat(list).hasSize(4));
  }

  @Test
  void aTopologyWithoutInstancesIsAnEmptyList() {
    assertThat(VrrpStates.parse("""
        ------< Global definitions >------
         Router ID = vips
        ------< VRRP Topology >------
        ------< Interfaces >------
         Name = lo
           State = UP, RUNNING
        """)).hasValue(List.of());
  }

  @Test
  void unknownStatesAndMissingInterfacesAreKeptAsSuch() {
    assertThat(VrrpStates.parse("""
        ------< VRRP Topology >------
         VRRP Instance = a
           State = GOTO_SOMEWHERE
           Virtual Router ID = 9
         VRRP Instance = no-vrid
           State = MASTER
         VRRP Instance = b
           State = STOP
           Tracked interfaces :
             Interface = eth9
           Virtual Router ID = 10
        ------< VRRP Sockpool >------
        """)).hasValue(List.of(
            new VrrpInstanceState("a", State.UNKNOWN, 9, Optional.empty()),
            new VrrpInstanceState("b", State.STOP, 10, Optional.empty())));
  }

  @Test
  void statesCarryKeepalivedsNumbers() {
    assertThat(List.of(State.INIT, State.BACKUP, State.MASTER, State.FAULT, State.DELETED, State.STOP, State.UNKNOWN)
        .stream().map(State::code)).containsExactly(0, 1, 2, 3, 97, 98, -1);
  }

  @Test
  void dumpFileOfLooksIntoTheProcessesRoot() {
    assertThat(VrrpStates.dumpFileOf(1234)).isEqualTo(Path.of("/proc/1234/root/tmp/keepalived.data"));
  }

  @Test
  void readingFromAProcessThatIsGoneIsEmptyAndLeavesAStaleDumpAlone(@TempDir Path dir) throws Exception {
    Path stale = dir.resolve("keepalived.data");
    Files.writeString(stale, sample("keepalived-2.2.7-node-a.data"), StandardCharsets.UTF_8);
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    assertThat(VrrpStates.read(gone.pid(), stale, Duration.ofMillis(200))).isEmpty();
    assertThat(VrrpStates.read(gone.pid(), dir.resolve("missing.data"), Duration.ofMillis(200))).isEmpty();
  }

  @Test
  void aDumpFromBeforeTheSignalIsNeverReported(@TempDir Path dir) throws Exception {
    Path stale = dir.resolve("keepalived.data");
    Files.writeString(stale, sample("keepalived-2.2.7-node-a.data"), StandardCharsets.UTF_8);
    // Alive, takes SIGUSR1 (ignores it) and writes nothing: like a keepalived without VRRP instances.
    Process quiet = new ProcessBuilder("sh", "-c", "trap '' USR1; sleep 30").start();
    try {
      Thread.sleep(100); // the trap is set up
      assertThat(VrrpStates.read(quiet.pid(), stale, Duration.ofMillis(300))).isEmpty();
      assertThat(quiet.isAlive()).isTrue();
    } finally {
      quiet.destroyForcibly().waitFor();
    }
  }
}
