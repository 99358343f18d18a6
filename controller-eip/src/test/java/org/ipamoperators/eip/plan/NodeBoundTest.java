package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NodeBoundTest {
  private static final Map<String, String> EDGE = Map.of("tier", "edge", "zone", "a");
  private static final Map<String, String> WEB = Map.of("tier", "web");

  @Test
  void blankIsAnyNode() {
    for (String s : new String[] {null, "", "  "}) {
      NodeBound b = NodeBound.parse(s);
      assertThat(b.any()).isTrue();
      assertThat(b.admits(WEB)).isTrue();
      assertThat(b.admits(Map.of())).isTrue();
    }
  }

  @Test
  void everyTermOfKubectlsSyntaxMustHold() {
    assertThat(NodeBound.parse("tier=edge").admits(EDGE)).isTrue();
    assertThat(NodeBound.parse("tier==edge").admits(WEB)).isFalse();
    assertThat(NodeBound.parse("tier!=web").admits(EDGE)).isTrue();
    assertThat(NodeBound.parse("tier!=web").admits(WEB)).isFalse();
    assertThat(NodeBound.parse("tier!=web").admits(Map.of())).isTrue();
    assertThat(NodeBound.parse("zone").admits(EDGE)).isTrue();
    assertThat(NodeBound.parse("zone").admits(WEB)).isFalse();
    assertThat(NodeBound.parse("!zone").admits(WEB)).isTrue();
    assertThat(NodeBound.parse("tier in (edge, gw)").admits(EDGE)).isTrue();
    assertThat(NodeBound.parse("tier in (edge,gw)").admits(WEB)).isFalse();
    assertThat(NodeBound.parse("tier notin (web)").admits(WEB)).isFalse();
    NodeBound both = NodeBound.parse("example.com/tier in (edge,gw), zone=a");
    assertThat(both.admits(Map.of("example.com/tier", "gw", "zone", "a"))).isTrue();
    assertThat(both.admits(Map.of("example.com/tier", "gw", "zone", "b"))).isFalse();
    assertThat(both.text()).isEqualTo("example.com/tier in (edge,gw), zone=a");
  }

  @Test
  void aTermThatIsNoSelectorIsRefusedWithTheTermNamed() {
    for (String bad : new String[] {"tier=edge,", "tier in (a", "tier=a b", "=edge", "tier=edge,tier=web"}) {
      assertThatThrownBy(() -> NodeBound.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> NodeBound.parse("tier>1")).hasMessageContaining("'tier>1' is not a label selector term");
  }

  @Test
  void namespacesEmptyAllowsEveryNamespaceElseOnlyThoseNamed() {
    assertThat(NodeModeLimits.NONE.allows("team-b")).isTrue();
    NodeModeLimits edge = new NodeModeLimits(Set.of("edge"), NodeBound.ANY);
    assertThat(edge.allows("edge")).isTrue();
    assertThat(edge.allows("team-b")).isFalse();
    assertThat(edge.refusal("team-b")).contains("team-b may not use node mode", "[edge]",
        "EIP_NODE_MODE_NAMESPACES");
  }
}
