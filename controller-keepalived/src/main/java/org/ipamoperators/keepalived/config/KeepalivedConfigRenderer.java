package org.ipamoperators.keepalived.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/**
 * Renders the keepalived.conf of one node of a {@code KeepalivedGroup}: a pure function of the
 * {@link KeepalivedGroupModel} and the node's name. Everything is emitted in a fixed order (instances by key and
 * family, VIPs, peers, scripts and verbatim lines sorted), so the same input gives byte-identical text and the
 * node's keepalived is reloaded only when something really changed.
 *
 * <p>What a node's configuration holds, per instance: {@code state BACKUP} everywhere (the election decides),
 * the interface (the node's own when the group uses {@code interfaceFromIP}), the router id, VRRP version and
 * advert interval, the priority ({@link #priority}: {@code ownerPriority} on the instance's preferred node, a
 * distinct lower one on each other node), {@code nopreempt} unless the instance has a preferred node that should
 * take its VIPs back ({@code preempt}, optionally delayed), with unicast the node's own address as source and the other nodes' addresses as peers,
 * PASS authentication (IPv4 only, VRRPv2), the tracked health checks, the VIPs (the first
 * {@code maxAdvertisedVips} in {@code virtual_ipaddress}, the rest in {@code virtual_ipaddress_excluded}) and the
 * service's verbatim lines. VIPs carry no prefix length and no {@code dev}: keepalived adds them as /32 or /128
 * on the instance's interface, IPv6 ones deprecated so they are never picked as a source address.
 *
 * <p>These choices follow what keepalived 2.2.7's {@code --config-test} refuses: two instances of
 * one family with the same router id on an interface, IPv4 and IPv6 VIPs in one {@code virtual_ipaddress}, an
 * instance without VIPs, fractional adverts with VRRPv2, authentication with VRRPv3, more VIPs than fit in an
 * advert, passwords over 8 characters, a unicast block without peers, and scripts without
 * {@code enable_script_security} and an existing {@code script_user}.
 */
public final class KeepalivedConfigRenderer {

  /**
   * Priority step between consecutive backups: 10 points put about 4 ms between their timeouts at a 0.1 s advert
   * interval ({@code skew = (256 - priority) / 256 x advert}), enough for the first to win before the next fires.
   */
  public static final int RANK_STEP = 10;

  private static final String INDENT = "    ";
  private static final Duration VRRP3_MAX_ADVERT = Duration.ofMillis(40_950);

  private KeepalivedConfigRenderer() {
  }

  /**
   * The configuration of {@code nodeName}.
   *
   * @throws IllegalArgumentException if the node is not one of the model's nodes
   * @throws IllegalStateException if the node's interface is unknown (the group uses {@code interfaceFromIP} and the
   *     node has not reported what it resolved to)
   */
  public static RenderedConfig render(KeepalivedGroupModel model, String nodeName) {
    GroupSettings settings = model.settings();
    KeepalivedNode self = model.node(nodeName);
    String iface = self.interfaceName().or(settings::interfaceName).orElseThrow(() -> new IllegalStateException(
        "Interface of node " + nodeName + " unknown: KeepalivedGroup " + settings.key() + " uses interfaceFromIP "
            + settings.interfaceFromIp().map(Ip::toString).orElse("?") + " and the node has not resolved it yet"));
    List<Notice> notices = new ArrayList<>();
    groupNotices(model, notices);

    List<String> blocks = new ArrayList<>();
    blocks.add(globalDefs(settings));
    SortedSet<HealthCheck> checks = new TreeSet<>();
    model.instances().forEach(instance -> checks.addAll(instance.healthChecks()));
    for (HealthCheck check : checks) {
      blocks.add(script(settings, check));
    }
    double advertsPerSecond = 0;
    int rendered = 0;
    for (VrrpInstance instance : model.instances()) {
      Optional<String> block = instance(model, self, iface, instance, notices);
      if (block.isPresent()) {
        blocks.add(block.get());
        advertsPerSecond += 1.0 / seconds(advertInterval(settings, instance.family()));
        rendered++;
      }
    }

    StringBuilder out = new StringBuilder();
    out.append("# keepalived.conf of KeepalivedGroup ").append(settings.key()).append(" for node ").append(nodeName)
        .append(".\n");
    out.append("# Rendered by ipam-operators controller-keepalived: edits are overwritten.\n");
    out.append("# ").append(rendered).append(rendered == 1 ? " VRRP instance: its master sends " : " VRRP instances:"
        + " their masters send ").append(decimal(advertsPerSecond)).append(" adverts/s in total.\n");
    for (String block : blocks) {
      out.append('\n').append(block);
    }
    return new RenderedConfig(nodeName, out.toString(), notices);
  }

  /** Renders every node's configuration, in node order. */
  public static List<RenderedConfig> renderAll(KeepalivedGroupModel model) {
    return model.nodes().stream().map(node -> render(model, node.name())).toList();
  }

  /**
   * The VRRP version of an instance of {@code family}: IPv6 always 3; IPv4 the group's, except 2 with a password
   * (VRRPv3 has no authentication).
   */
  public static int vrrpVersion(GroupSettings settings, IpFamily family) {
    if (family == IpFamily.IPV6) {
      return 3;
    }
    return settings.password().isPresent() ? 2 : settings.vrrpVersion();
  }

  /** The advert interval of an instance of {@code family}: whole seconds under VRRPv2 (rounded up). */
  public static Duration advertInterval(GroupSettings settings, IpFamily family) {
    Duration interval = settings.advertInterval();
    if (vrrpVersion(settings, family) == 2) {
      long seconds = Math.max(1, (interval.toNanos() + 999_999_999L) / 1_000_000_000L);
      return Duration.ofSeconds(seconds);
    }
    return interval.compareTo(VRRP3_MAX_ADVERT) > 0 ? VRRP3_MAX_ADVERT : interval;
  }

  private static void groupNotices(KeepalivedGroupModel model, List<Notice> notices) {
    GroupSettings settings = model.settings();
    boolean anyV4 = model.instances().stream().anyMatch(i -> i.family() == IpFamily.IPV4);
    boolean anyV6 = model.instances().stream().anyMatch(i -> i.family() == IpFamily.IPV6);
    settings.password().ifPresent(password -> {
      if (password.length() > GroupSettings.PASSWORD_LENGTH) {
        notices.add(new Notice(settings.key(), "keepalived uses only the first " + GroupSettings.PASSWORD_LENGTH
            + " characters of the VRRP password"));
      }
      if (anyV4 && settings.vrrpVersion() == 3) {
        Duration v2 = advertInterval(settings, IpFamily.IPV4);
        notices.add(new Notice(settings.key(), "password authentication needs VRRPv2: IPv4 instances run VRRPv2 with"
            + " adverts every " + decimal(seconds(v2)) + " s"
            + (v2.equals(settings.advertInterval()) ? "" : " instead of " + decimal(seconds(settings.advertInterval()))
                + " s")
            + ", so a takeover needs about " + decimal(seconds(v2) * 3.6) + " s"));
      }
      if (anyV6) {
        notices.add(new Notice(settings.key(),
            "IPv6 instances run VRRPv3, which has no authentication: they are not password-protected"));
      }
    });
    if (anyV6 && settings.vrrpVersion() == 2
        && !advertInterval(settings, IpFamily.IPV6).equals(settings.advertInterval())) {
      notices.add(new Notice(settings.key(), "IPv6 instances run VRRPv3, whose longest advert interval is 40.95 s"));
    }
    if (settings.unicast()) {
      for (IpFamily family : IpFamily.values()) {
        boolean used = family == IpFamily.IPV4 ? anyV4 : anyV6;
        List<String> without = model.nodes().stream().filter(n -> n.address(family).isEmpty())
            .map(KeepalivedNode::name).toList();
        if (used && !without.isEmpty()) {
          notices.add(new Notice(settings.key(), "unicast: nodes without an " + family.kubernetesName()
              + " address take no part in " + family.kubernetesName() + " instances: " + String.join(", ", without)));
        }
      }
    }
  }

  private static String globalDefs(GroupSettings settings) {
    StringBuilder b = new StringBuilder("global_defs {\n");
    line(b, 1, "router_id " + settings.name());
    line(b, 1, "enable_script_security");
    line(b, 1, "script_user root");
    for (Map.Entry<String, String> entry : settings.verbatimConfig().entrySet()) {
      line(b, 1, verbatimLine(entry));
    }
    return b.append("}\n").toString();
  }

  private static String script(GroupSettings settings, HealthCheck check) {
    StringBuilder b = new StringBuilder("vrrp_script ").append(check.scriptName()).append(" {\n");
    line(b, 1, "script \"" + settings.healthCheckCommand() + " --silent --fail --max-time 1 --output /dev/null"
        + " http://127.0.0.1:" + check.port() + "/health\"");
    line(b, 1, "interval 1");
    line(b, 1, "timeout 2");
    line(b, 1, "rise 3");
    line(b, 1, "fall 3");
    return b.append("}\n").toString();
  }

  private static Optional<String> instance(KeepalivedGroupModel model, KeepalivedNode self, String iface,
      VrrpInstance instance, List<Notice> notices) {
    GroupSettings settings = model.settings();
    IpFamily family = instance.family();
    int version = vrrpVersion(settings, family);

    Optional<Ip> source = settings.unicast() ? self.address(family) : Optional.empty();
    if (settings.unicast() && source.isEmpty()) {
      notices.add(new Notice(instance.name(), "left out: unicast needs an " + family.kubernetesName()
          + " address on node " + self.name()));
      return Optional.empty();
    }

    StringBuilder b = new StringBuilder("vrrp_instance ").append(instance.name()).append(" {\n");
    line(b, 1, "state BACKUP");
    line(b, 1, "interface " + iface);
    line(b, 1, "virtual_router_id " + instance.routerId());
    line(b, 1, "version " + version);
    line(b, 1, "priority " + priority(model, instance, self.name()));
    line(b, 1, "advert_int " + decimal(seconds(advertInterval(settings, family))));
    if (instance.owner().isEmpty() || !settings.preempt()) {
      line(b, 1, "nopreempt");
    } else if (!settings.preemptDelay().isZero()) {
      line(b, 1, "preempt_delay " + decimal(seconds(settings.preemptDelay())));
    }
    if (source.isPresent()) {
      line(b, 1, "unicast_src_ip " + source.get());
      line(b, 1, "unicast_peer {");
      unicastPeers(model, self, family, source.get()).forEach(peer -> line(b, 2, peer.toString()));
      line(b, 1, "}");
    }
    if (version == 2 && settings.password().isPresent()) {
      String password = settings.password().get();
      line(b, 1, "authentication {");
      line(b, 2, "auth_type PASS");
      line(b, 2, "auth_pass " + password.substring(0, Math.min(password.length(), GroupSettings.PASSWORD_LENGTH)));
      line(b, 1, "}");
    }
    if (!instance.healthChecks().isEmpty()) {
      line(b, 1, "track_script {");
      instance.healthChecks().forEach(check -> line(b, 2, check.scriptName()));
      line(b, 1, "}");
    }
    vipBlocks(b, List.copyOf(instance.vips()), settings.maxAdvertisedVips());
    for (Map.Entry<String, String> entry : instance.verbatim().entrySet()) {
      line(b, 1, verbatimLine(entry));
    }
    return Optional.of(b.append("}\n").toString());
  }

  /** The other nodes' addresses of the family; a lone node sends to itself. */
  private static SortedSet<Ip> unicastPeers(KeepalivedGroupModel model, KeepalivedNode self, IpFamily family,
      Ip source) {
    SortedSet<Ip> peers = new TreeSet<>();
    for (KeepalivedNode node : model.nodes()) {
      if (!node.name().equals(self.name())) {
        node.address(family).ifPresent(peers::add);
      }
    }
    if (peers.isEmpty()) {
      // keepalived falls back to multicast on an empty peer list.
      peers.add(source);
    }
    return peers;
  }

  /** The first {@code advertised} VIPs in the advertisement, the others beside it (still added, not advertised). */
  private static void vipBlocks(StringBuilder b, List<Ip> vips, int maxAdvertised) {
    int advertised = Math.min(vips.size(), maxAdvertised);
    line(b, 1, "virtual_ipaddress {");
    vips.subList(0, advertised).forEach(vip -> line(b, 2, vip.toString()));
    line(b, 1, "}");
    if (advertised < vips.size()) {
      line(b, 1, "virtual_ipaddress_excluded {");
      vips.subList(advertised, vips.size()).forEach(vip -> line(b, 2, vip.toString()));
      line(b, 1, "}");
    }
  }

  /**
   * The priority of {@code node} for {@code instance}: {@code ownerPriority} on the instance's preferred node; on
   * the others {@code priority - RANK_STEP x rank} (at least 1), rank being the node's place in an order of its own
   * per instance (rendezvous hashing of the instance key and the node names, preferred node left out). Distinct
   * priorities make one backup time out clearly first when the master dies (with equal ones, all backups of a
   * three-node group become master together and the VIP moves twice), and the per-instance order spreads a dead
   * node's instances over the survivors instead of piling them on one node.
   */
  public static int priority(KeepalivedGroupModel model, VrrpInstance instance, String node) {
    GroupSettings settings = model.settings();
    if (instance.owner().map(node::equals).orElse(false)) {
      return settings.ownerPriority();
    }
    long own = InstancePlanner.hash(instance.key() + "\n" + node);
    int rank = 0;
    for (KeepalivedNode other : model.nodes()) {
      String name = other.name();
      if (name.equals(node) || instance.owner().map(name::equals).orElse(false)) {
        continue;
      }
      long score = InstancePlanner.hash(instance.key() + "\n" + name);
      if (score > own || score == own && name.compareTo(node) < 0) {
        rank++;
      }
    }
    return Math.max(1, settings.priority() - RANK_STEP * rank);
  }

  private static String verbatimLine(Map.Entry<String, String> entry) {
    return entry.getValue().isEmpty() ? entry.getKey() : entry.getKey() + " " + entry.getValue();
  }

  private static void line(StringBuilder b, int depth, String text) {
    b.append(INDENT.repeat(depth)).append(text).append('\n');
  }

  private static double seconds(Duration duration) {
    return duration.toNanos() / 1e9;
  }

  /** Seconds (or a rate) with at most two decimals and no trailing zeros: 0.1, 1, 2.5, 40.95. */
  static String decimal(double value) {
    BigDecimal d = BigDecimal.valueOf(value).setScale(2, RoundingMode.HALF_UP).stripTrailingZeros();
    return d.scale() < 0 ? d.setScale(0).toPlainString() : d.toPlainString();
  }
}
