package org.ipamoperators.core.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Placements read from OVN EgressIPs' status, and the cloud checks made with them. */
class OvnPlacementsTest {
  private static final String NAME = "egressipam-team-a";
  private static final Map<String, Object> SPEC = Map.of("egressIPs", List.of("198.51.100.10", "2001:db8::0:1"),
      "namespaceSelector", Map.of());

  private static Map<String, Object> item(String node, String ip) {
    Map<String, Object> m = new HashMap<>();
    m.put("node", node);
    m.put("egressIP", ip);
    return m;
  }

  private static Map<String, Object> status(Object... items) {
    return Map.of("items", List.of(items));
  }

  @Test
  void eachItemOfTheStatusIsAPlacementNamingTheEgressIp() {
    List<Placement> ps = OvnPlacements.of(NAME, SPEC, status(item("a1", "198.51.100.10"), item("b1", "2001:db8::1")));
    assertThat(ps).containsExactly(
        new Placement(Resource.ip("198.51.100.10"), "a1", "EgressIP egressipam-team-a status.items"),
        new Placement(Resource.ip("2001:db8::1"), "b1", "EgressIP egressipam-team-a status.items"));
  }

  @Test
  void addressesAreComparedInCanonicalForm() {
    Map<String, Object> spec = Map.of("egressIPs", List.of(" 2001:DB8:0::1 "));
    assertThat(OvnPlacements.of(NAME, spec, status(item("a1", "2001:db8::0001"))))
        .extracting(Placement::resource).containsExactly(Resource.ip("2001:db8::1"));
  }

  @Test
  void aMalformedStatusPlacesNothing() {
    assertThat(OvnPlacements.of(NAME, SPEC, null)).isEmpty();
    assertThat(OvnPlacements.of(NAME, SPEC, "assigned")).isEmpty();
    assertThat(OvnPlacements.of(NAME, SPEC, Map.of())).isEmpty();
    assertThat(OvnPlacements.of(NAME, SPEC, Map.of("items", "a1=198.51.100.10"))).isEmpty();
    assertThat(OvnPlacements.of(NAME, SPEC, Map.of("items", Map.of("node", "a1", "egressIP", "198.51.100.10"))))
        .isEmpty();
  }

  @Test
  void aMalformedItemIsSkippedAndTheOthersAreRead() {
    List<Object> items = new ArrayList<>();
    items.add(null);
    items.add("a1");
    items.add(item(null, "198.51.100.10")); // no node
    items.add(Map.of("egressIP", "198.51.100.10")); // no node key at all
    items.add(item("  ", "198.51.100.10")); // blank node
    items.add(Map.of("node", 7, "egressIP", "198.51.100.10")); // node not a string
    items.add(item("a1", null)); // no address
    items.add(item("a1", "not-an-ip"));
    items.add(item("a1", "198.51.100.0/24")); // a prefix, not an address
    items.add(item("b1", "198.51.100.10")); // the one good item
    assertThat(OvnPlacements.of(NAME, SPEC, Map.of("items", items)))
        .containsExactly(new Placement(Resource.ip("198.51.100.10"), "b1", "EgressIP " + NAME + " status.items"));
  }

  @Test
  void anAddressTheSpecNoLongerRequestsIsAStaleItemNotAPlacement() {
    assertThat(OvnPlacements.of(NAME, SPEC, status(item("a1", "198.51.100.99"), item("b1", "198.51.100.10"))))
        .extracting(Placement::node).containsExactly("b1");
    assertThat(OvnPlacements.of(NAME, null, status(item("a1", "198.51.100.10")))).isEmpty();
    assertThat(OvnPlacements.of(NAME, Map.of("egressIPs", "198.51.100.10"), status(item("a1", "198.51.100.10"))))
        .isEmpty();
  }

  @Test
  void anItemListedTwiceIsOnePlacement() {
    assertThat(OvnPlacements.of(NAME, SPEC, status(item("a1", "198.51.100.10"), item("a1", "198.51.100.10"))))
        .hasSize(1);
  }

  /** With OVN's placement the existing cloud checks see drift, agreement and a duplicate, as with HostSubnets. */
  @Test
  void theCloudChecksUseOvnPlacements() {
    Resource a = Resource.ip("198.51.100.10");
    Instant now = Instant.parse("2026-11-26T12:00:00Z");
    LedgerEntry claim = new LedgerEntry(a, "egressip/Namespace/team-a", "IPClaim x", now.minusSeconds(3600), true);
    Publication shown = new Publication(a, "egressip/Namespace/team-a", "EgressIP " + NAME + " spec.egressIPs");
    List<Placement> placed = OvnPlacements.of(NAME, SPEC, status(item("a1", "198.51.100.10")));
    Attachment onA = new Attachment(a, "a1", "ENI eni-a of node a1");
    Attachment onB = new Attachment(a, "b1", "ENI eni-b of node b1");

    AuditReport moved = LedgerAudit.audit(List.of(claim), List.of(shown),
        CloudView.of(List.of(onB), placed, Set.of("a1", "b1"), Map.of()), AuditOptions.at(now));
    assertThat(moved.findings()).extracting(Finding::kind).containsExactly(FindingKind.DRIFT);
    assertThat(moved.findings().get(0).message()).contains("a1 (EgressIP " + NAME + " status.items)")
        .contains("is on ENI eni-b of node b1");

    AuditReport agreed = LedgerAudit.audit(List.of(claim), List.of(shown),
        CloudView.of(List.of(onA), placed, Set.of("a1", "b1"), Map.of()), AuditOptions.at(now));
    assertThat(agreed.findings()).isEmpty();
  }
}
