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
    VrrpStates states = new VrrpStates(Duration.ZERO, Duration.ofMillis(200));
    assertThat(states.read(gone.pid(), stale)).isEmpty();
    assertThat(states.read(gone.pid(), dir.resolve("missing.data"))).isEmpty();
  }

  @Test
  void aDumpFromBeforeTheSignalIsNeverReported(@TempDir Path dir) throws Exception {
    Path stale = dir.resolve("keepalived.data");
    Files.writeString(stale, sample("keepalived-2.2.7-node-a.data"), StandardCharsets.UTF_8);
    // Alive, takes SIGUSR1 (ignores it) and writes nothing: like a keepalived without VRRP instances.
    Process quiet = new ProcessBuilder("sh", "-c", "trap '' USR1; sleep 30").start();
    try {
      Thread.sleep(100); // the trap is set up
      assertThat(new VrrpStates(Duration.ZERO, Duration.ofMillis(300)).read(quiet.pid(), stale)).isEmpty();
      assertThat(quiet.isAlive()).isTrue();
    } finally {
      quiet.destroyForcibly().waitFor();
    }
  }

  @Test
  void scrapesWithinTheIntervalShareOneSignalAndTheLastDumpsStates(@TempDir Path dir) throws Exception {
    Path dump = dir.resolve("keepalived.data");
    String nodeA = sample("keepalived-2.2.7-node-a.data");
    String nodeB = sample("keepalived-2.2.7-node-b.data");
    long[] nanos = {1_000_000_000L};
    List<Long> signalled = new java.util.ArrayList<>();
    // keepalived as the reloader sees it: each SIGUSR1 rewrites the dump (node-a's states first, node-b's after).
    VrrpStates states = new VrrpStates(Duration.ofSeconds(5), Duration.ofMillis(500), () -> nanos[0], pid -> {
      signalled.add(pid);
      write(dump, (signalled.size() == 1 ? nodeA : nodeB) + "\n# dump " + signalled.size() + "\n");
    });
    List<VrrpInstanceState> first = states.read(42, dump);
    assertThat(first).isEqualTo(VrrpStates.parse(nodeA).orElseThrow()).isNotEmpty();
    for (int scrape = 0; scrape < 50; scrape++) {
      nanos[0] += Duration.ofMillis(99).toNanos(); // 50 scrapes within 4.95 s
      assertThat(states.read(42, dump)).isEqualTo(first);
    }
    assertThat(signalled).containsExactly(42L);

    nanos[0] += Duration.ofMillis(50).toNanos(); // 5 s after the first signal: a new dump
    assertThat(states.read(42, dump)).isEqualTo(VrrpStates.parse(nodeB).orElseThrow()).isNotEqualTo(first);
    assertThat(signalled).containsExactly(42L, 42L);
    // Another keepalived (restarted: a new pid) is asked at once.
    assertThat(states.read(43, dump)).isNotEmpty();
    assertThat(signalled).containsExactly(42L, 42L, 43L);
  }

  @Test
  void aFailedDumpIsNotAskedForAgainWithinTheInterval(@TempDir Path dir) {
    long[] nanos = {0};
    int[] signals = {0};
    VrrpStates states = new VrrpStates(Duration.ofSeconds(5), Duration.ofMillis(50), () -> nanos[0], pid -> {
      signals[0]++;
      throw new IllegalStateException("no such process");
    });
    for (int scrape = 0; scrape < 10; scrape++) { // at 0, 0.4, ... 3.6 s
      assertThat(states.read(7, dir.resolve("keepalived.data"))).isEmpty();
      nanos[0] += Duration.ofMillis(400).toNanos();
    }
    assertThat(signals[0]).isEqualTo(1);
    nanos[0] = Duration.ofSeconds(5).toNanos();
    assertThat(states.read(7, dir.resolve("keepalived.data"))).isEmpty();
    assertThat(signals[0]).isEqualTo(2);
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
