package org.ipamoperators.core.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Audit properties over random worlds (QuickTheories draws the seed; a failure names it). */
class LedgerAuditPropertiesTest {
  private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");

  private record World(List<LedgerEntry> entries, List<Publication> publications) {}

  private static World random(long seed) {
    Random rnd = new Random(seed);
    int resources = 1 + rnd.nextInt(12);
    int owners = 1 + rnd.nextInt(5);
    List<LedgerEntry> entries = new ArrayList<>();
    List<Publication> pubs = new ArrayList<>();
    for (int i = 0; i < resources; i++) {
      Resource r = Resource.ip("198.51.100." + i);
      int claims = rnd.nextInt(10) < 7 ? 1 : rnd.nextInt(3);
      for (int c = 0; c < claims; c++) {
        Instant at = rnd.nextInt(5) == 0 ? null : NOW.minusSeconds(rnd.nextInt(3600));
        entries.add(new LedgerEntry(r, "o" + rnd.nextInt(owners), "claim-" + i + "-" + c, at, rnd.nextBoolean()));
      }
      int shows = rnd.nextInt(10) < 6 ? 1 : rnd.nextInt(3);
      for (int p = 0; p < shows; p++) {
        pubs.add(new Publication(r, "o" + rnd.nextInt(owners), "obj-" + i + "-" + p));
      }
    }
    return new World(entries, pubs);
  }

  private static AuditReport audit(World w) {
    return LedgerAudit.audit(w.entries(), w.publications(), new AuditOptions(NOW, Duration.ofMinutes(5)));
  }

  @Test
  void aDuplicateIsReportedExactlyWhenTwoHoldersShowOneResource() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      World w = random(seed);
      Map<Resource, Set<String>> holders = new HashMap<>();
      w.publications().forEach(p -> holders.computeIfAbsent(p.resource(), r -> new HashSet<>()).add(p.holder()));
      Set<Resource> expected = new HashSet<>();
      holders.forEach((r, h) -> { if (h.size() > 1) { expected.add(r); } });
      Set<Resource> reported = new HashSet<>();
      audit(w).findings().stream().filter(f -> f.kind() == FindingKind.DUPLICATE).forEach(f -> reported.add(f.resource()));
      assertThat(reported).as("seed %d", seed).isEqualTo(expected);
    });
  }

  @Test
  void repairsNeverTouchAPublishedResourceNorALiveOwner() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      World w = random(seed);
      Set<Resource> published = new HashSet<>();
      w.publications().forEach(p -> published.add(p.resource()));
      for (Repair rep : audit(w).repairs()) {
        assertThat(w.entries()).as("seed %d", seed).contains(rep.entry());
        assertThat(rep.entry().ownerExists()).as("seed %d", seed).isFalse();
        assertThat(published).as("seed %d", seed).doesNotContain(rep.entry().resource());
      }
    });
  }

  @Test
  void theReportDoesNotDependOnInputOrder() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      World w = random(seed);
      List<LedgerEntry> e = new ArrayList<>(w.entries());
      List<Publication> p = new ArrayList<>(w.publications());
      Collections.shuffle(e, new Random(seed + 1));
      Collections.shuffle(p, new Random(seed + 2));
      AuditReport a = audit(w);
      AuditReport b = audit(new World(e, p));
      assertThat(b.findings()).as("seed %d", seed).isEqualTo(a.findings());
      assertThat(new HashSet<>(b.repairs())).as("seed %d", seed).isEqualTo(new HashSet<>(a.repairs()));
    });
  }

  @Test
  void aWorldWhereEveryClaimIsShownByItsOwnerIsClean() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      World w = random(seed);
      Map<Resource, LedgerEntry> one = new HashMap<>();
      w.entries().forEach(e -> one.putIfAbsent(e.resource(), e));
      List<Publication> pubs = one.values().stream()
          .map(e -> new Publication(e.resource(), e.owner(), "obj")).toList();
      AuditReport report = LedgerAudit.audit(one.values(), pubs, AuditOptions.at(NOW));
      assertThat(report.findings()).as("seed %d", seed).isEmpty();
      assertThat(report.repairs()).as("seed %d", seed).isEmpty();
    });
  }

  private record CloudWorld(World world, CloudView cloud) {}

  /** A random world with nodes, some unreadable, attachments and placements of its addresses and strays. */
  private static CloudWorld randomCloud(long seed) {
    World w = random(seed);
    Random rnd = new Random(~seed);
    int nodes = 1 + rnd.nextInt(4);
    Set<String> described = new HashSet<>();
    Map<String, String> unknown = new HashMap<>();
    for (int n = 0; n < nodes; n++) {
      if (rnd.nextInt(4) == 0) {
        unknown.put("n" + n, "throttled");
      } else {
        described.add("n" + n);
      }
    }
    List<Attachment> attachments = new ArrayList<>();
    List<Placement> placements = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      Resource r = Resource.ip("198.51.100." + i);
      if (rnd.nextBoolean()) {
        placements.add(new Placement(r, "n" + rnd.nextInt(nodes), "HostSubnet"));
      }
      int on = rnd.nextInt(10) < 6 ? 1 : rnd.nextInt(3);
      for (int a = 0; a < on; a++) {
        String node = "n" + rnd.nextInt(nodes);
        if (described.contains(node)) {
          attachments.add(new Attachment(r, node, "eni of " + node));
        }
      }
    }
    return new CloudWorld(w, CloudView.of(attachments, placements, described, unknown));
  }

  private static AuditReport audit(CloudWorld c) {
    return LedgerAudit.audit(c.world().entries(), c.world().publications(), c.cloud(),
        new AuditOptions(NOW, Duration.ofMinutes(5)));
  }

  @Test
  void anAttachedAddressIsAnOrphanExactlyWhenNoLedgerClaimsIt() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      CloudWorld c = randomCloud(seed);
      Set<Resource> claimed = new HashSet<>();
      c.world().entries().forEach(e -> claimed.add(e.resource()));
      Set<Resource> expected = new HashSet<>();
      c.cloud().attachments().stream().map(Attachment::resource).filter(r -> !claimed.contains(r)).forEach(expected::add);
      Set<Resource> reported = new HashSet<>();
      audit(c).findings().stream().filter(f -> f.kind() == FindingKind.ORPHAN && f.message().contains("on an interface"))
          .forEach(f -> reported.add(f.resource()));
      assertThat(reported).as("seed %d", seed).isEqualTo(expected);
    });
  }

  @Test
  void anUnreadableNodeIsReportedAndNeverNamedAsMissingAnAddress() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      CloudWorld c = randomCloud(seed);
      AuditReport report = audit(c);
      Set<String> unknownReported = new HashSet<>();
      report.findings().stream().filter(f -> f.kind() == FindingKind.UNKNOWN).forEach(f -> unknownReported.add(f.resource().value()));
      assertThat(unknownReported).as("seed %d", seed).isEqualTo(c.cloud().unknown().keySet());
      for (Finding f : report.findings()) {
        for (String node : c.cloud().unknown().keySet()) {
          assertThat(f.message()).as("seed %d", seed).doesNotContain("through " + node + " (");
        }
      }
    });
  }

  @Test
  void repairsNeverReleaseAnAddressStillOnAnInterface() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      CloudWorld c = randomCloud(seed);
      Set<Resource> attached = new HashSet<>();
      c.cloud().attachments().forEach(a -> attached.add(a.resource()));
      for (Repair rep : audit(c).repairs()) {
        assertThat(attached).as("seed %d", seed).doesNotContain(rep.entry().resource());
        assertThat(rep.entry().ownerExists()).as("seed %d", seed).isFalse();
      }
    });
  }

  @Test
  void theCloudReportDoesNotDependOnInputOrder() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      CloudWorld c = randomCloud(seed);
      List<Attachment> a = new ArrayList<>(c.cloud().attachments());
      List<Placement> p = new ArrayList<>(c.cloud().placements());
      Collections.shuffle(a, new Random(seed + 3));
      Collections.shuffle(p, new Random(seed + 4));
      CloudWorld shuffled = new CloudWorld(c.world(), CloudView.of(a, p, c.cloud().described(), c.cloud().unknown()));
      assertThat(audit(shuffled).findings()).as("seed %d", seed).isEqualTo(audit(c).findings());
    });
  }

  @Test
  void everyAddressOnTheInterfaceOfItsRoutingNodeAloneIsClean() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      World w = random(seed);
      Map<Resource, LedgerEntry> one = new HashMap<>();
      w.entries().forEach(e -> one.putIfAbsent(e.resource(), e));
      List<Publication> pubs = one.values().stream().map(e -> new Publication(e.resource(), e.owner(), "obj")).toList();
      Random rnd = new Random(seed);
      List<Attachment> attachments = new ArrayList<>();
      List<Placement> placements = new ArrayList<>();
      for (Resource r : one.keySet()) {
        String node = "n" + rnd.nextInt(3);
        attachments.add(new Attachment(r, node, "eni of " + node));
        placements.add(new Placement(r, node, "HostSubnet " + node));
      }
      AuditReport report = LedgerAudit.audit(one.values(), pubs,
          CloudView.of(attachments, placements, Set.of("n0", "n1", "n2"), Map.of()), AuditOptions.at(NOW));
      assertThat(report.findings()).as("seed %d", seed).isEmpty();
    });
  }
}
