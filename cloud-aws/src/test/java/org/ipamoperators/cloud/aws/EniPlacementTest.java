package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/** How each wanted address is placed on a target ENI, from who holds it now. */
class EniPlacementTest {
  private static Ip ip(String s) {
    return Ip.parse(s);
  }

  @Test
  void eachAddressIsPlacedByItsHolder() {
    Ip free4 = ip("10.0.0.10");
    Ip free6 = ip("2001:db8::10");
    Ip mine = ip("10.0.0.11");
    Ip moved4 = ip("10.0.0.12");
    Ip moved6 = ip("2001:db8::12");
    Ip foreign = ip("10.0.0.13");
    EniPlacement.Holder old = new EniPlacement.Holder("eni-old", Set.of(moved4, moved6));
    Map<Ip, EniPlacement.Holder> holders = Map.of(mine, new EniPlacement.Holder("eni-target", Set.of()),
        moved4, old, moved6, old, foreign, new EniPlacement.Holder("eni-other", Set.of(free4)));

    EniPlacement p = EniPlacement.of("eni-target", List.of(free4, free6, mine, moved4, moved6, foreign), holders);

    assertThat(p.assign()).containsExactly(free4);
    assertThat(p.reassign()).containsExactly(moved4);
    assertThat(p.assignV6()).containsExactly(free6, moved6);
    assertThat(p.v6From()).containsExactly(Map.entry("eni-old", List.of(moved6)));
    assertThat(p.movedFrom()).containsExactly(Map.entry("eni-old", List.of(moved4, moved6)));
    assertThat(p.adopt()).containsExactly(mine);
    assertThat(p.refused()).containsExactly(Map.entry(foreign, "eni-other"));
    assertThat(p.toTag()).containsExactly(free4, moved4, free6, moved6, mine);
  }

  @Test
  void anAddressListedOnlyByAnotherEnisTagsIsNotMoved() {
    Ip ip = ip("10.0.0.20");
    EniPlacement p = EniPlacement.of("eni-target", List.of(ip),
        Map.of(ip, new EniPlacement.Holder("eni-other", Set.of(ip("10.0.0.21")))));

    assertThat(p.toTag()).isEmpty();
    assertThat(p.refused()).containsOnlyKeys(ip);
  }
}
