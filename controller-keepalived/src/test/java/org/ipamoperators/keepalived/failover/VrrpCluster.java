package org.ipamoperators.keepalived.failover;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.config.KeepalivedConfigRenderer;
import org.ipamoperators.keepalived.config.KeepalivedGroupModel;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.RenderedConfig;
import org.ipamoperators.keepalived.config.RenderedConfigs;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.ipamoperators.testsupport.keepalived.Keepalived;
import org.ipamoperators.testsupport.netns.NetnsExtension;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;

/**
 * Nodes as network namespaces on one link (two joined by a veth pair, more on a bridge), each with {@code eth0}
 * carrying its host addresses, running the real keepalived with the configuration the renderer produced for it.
 * Closing stops every keepalived and deletes the namespaces.
 */
final class VrrpCluster implements AutoCloseable {

  /** The interface of every node. */
  static final String INTERFACE = "eth0";

  private final NetworkLab lab;
  private final Map<String, NetworkNamespace> namespaces = new LinkedHashMap<>();
  private final Map<String, KeepalivedProcess> running = new LinkedHashMap<>();
  private final Path workDir;
  private final Class<?> owner;
  private int starts;

  private VrrpCluster(NetworkLab lab, Path workDir, Class<?> owner) {
    this.lab = lab;
    this.workDir = workDir;
    this.owner = owner;
  }

  /**
   * Namespaces for {@code nodes}: each gets {@code eth0} with the node's IPv4 (/24) and IPv6 (/64) host addresses.
   * IPv6 duplicate address detection is off, so the link-local addresses VRRPv3 sends from are usable at once.
   */
  static VrrpCluster create(List<KeepalivedNode> nodes, Class<?> owner) {
    NetnsExtension.requireNetworkNamespaces();
    Keepalived.locate();
    Path workDir;
    try {
      workDir = Files.createDirectories(Path.of("target", "failover"))
          .resolve(owner.getSimpleName() + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    VrrpCluster cluster = new VrrpCluster(NetworkLab.create(), workDir, owner);
    try {
      NetworkLab.Bridge bridge = nodes.size() > 2 ? cluster.lab.bridge("lan") : null;
      for (KeepalivedNode node : nodes) {
        NetworkNamespace ns = cluster.lab.namespace(node.name());
        ns.exec("sh", "-c", "echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad"
            + " && echo 0 > /proc/sys/net/ipv6/conf/all/accept_dad").orThrow();
        cluster.namespaces.put(node.name(), ns);
      }
      List<NetworkNamespace> all = List.copyOf(cluster.namespaces.values());
      if (bridge != null) {
        for (NetworkNamespace ns : all) {
          cluster.lab.attach(bridge, ns, INTERFACE);
        }
      } else if (all.size() == 2) {
        cluster.lab.veth(all.get(0), INTERFACE, all.get(1), INTERFACE);
      } else {
        throw new IllegalArgumentException("A cluster needs at least two nodes");
      }
      for (KeepalivedNode node : nodes) {
        NetworkNamespace ns = cluster.namespaces.get(node.name());
        node.ipv4().ifPresent(ip -> ns.addAddress(INTERFACE, ip + "/24"));
        node.ipv6().ifPresent(ip -> ns.addAddress(INTERFACE, ip + "/64"));
      }
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  NetworkNamespace namespace(String node) {
    return namespaces.get(node);
  }

  List<String> nodes() {
    return List.copyOf(namespaces.keySet());
  }

  Path workDir() {
    return workDir;
  }

  /**
   * Renders each node's configuration from {@code model}, checks it with {@code keepalived --config-test} in the
   * node's namespace, and starts keepalived on it.
   */
  void startAll(KeepalivedGroupModel model) {
    for (String node : nodes()) {
      start(model, node);
    }
    for (KeepalivedProcess process : running.values()) {
      process.awaitRunning(Duration.ofSeconds(10));
    }
  }

  /** Starts (or restarts) keepalived on one node with the configuration rendered for it. */
  void start(KeepalivedGroupModel model, String node) {
    RenderedConfig config = KeepalivedConfigRenderer.render(model, node);
    RenderedConfigs.record(owner, "failover-" + node, config.text());
    ConfigCheck check = Keepalived.locate().checkConfig(config.text(), namespaces.get(node));
    if (!check.valid()) {
      throw new IllegalStateException("keepalived --config-test refuses the configuration of " + node + ":\n"
          + check.output() + "\n" + config.text());
    }
    Optional.ofNullable(running.remove(node)).ifPresent(KeepalivedProcess::stop);
    KeepalivedProcess process = KeepalivedProcess.start(namespaces.get(node), workDir, node + "-" + (++starts),
        config.text());
    running.put(node, process);
    process.awaitRunning(Duration.ofSeconds(10));
  }

  /** The nodes whose {@code eth0} currently has {@code vip}. */
  List<String> holders(Ip vip) {
    List<String> holders = new ArrayList<>();
    for (Map.Entry<String, NetworkNamespace> entry : namespaces.entrySet()) {
      String addresses = entry.getValue().ip("-brief", "address", "show", "dev", INTERFACE).stdout();
      if ((" " + addresses.replace('\n', ' ')).contains(" " + vip + "/")) {
        holders.add(entry.getKey());
      }
    }
    return holders;
  }

  /** Waits until exactly one node holds {@code vip}, and still does 0.5 s later; returns that node. */
  String awaitSingleHolder(Ip vip, Duration timeout) {
    return awaitSingleHolder(vip, nodes(), timeout);
  }

  /** As {@link #awaitSingleHolder(Ip, Duration)}, looking only at {@code among}. */
  String awaitSingleHolder(Ip vip, List<String> among, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String candidate = null;
    long since = 0;
    while (System.nanoTime() < deadline) {
      List<String> holders = holders(vip).stream().filter(among::contains).toList();
      if (holders.size() == 1) {
        if (!holders.get(0).equals(candidate)) {
          candidate = holders.get(0);
          since = System.nanoTime();
        } else if (System.nanoTime() - since >= 500_000_000L) {
          return candidate;
        }
      } else {
        candidate = null;
      }
      KeepalivedProcess.sleep(20);
    }
    throw new AssertionError("No single holder of " + vip + " among " + among + " within " + timeout + "; holders: "
        + holders(vip) + "\n" + diagnostics());
  }

  /**
   * Crashes keepalived on {@code node} (SIGKILL) and measures the time until {@code vip} is added on another
   * node.
   */
  Takeover crashAndMeasure(String node, Ip vip, Duration timeout) {
    return crashAndMeasure(node, vip, timeout, Duration.ZERO);
  }

  /**
   * As {@link #crashAndMeasure(String, Ip, Duration)}, crashing {@code delay} after the watches are ready: a random
   * delay puts the crash at a random point between two adverts, as a real crash would be.
   */
  Takeover crashAndMeasure(String node, Ip vip, Duration timeout, Duration delay) {
    List<String> survivors = nodes().stream().filter(n -> !n.equals(node)).toList();
    List<AddressWatch> watches = new ArrayList<>();
    try {
      for (String survivor : survivors) {
        watches.add(AddressWatch.start(namespaces.get(survivor)));
      }
      if (!delay.isZero()) {
        KeepalivedProcess.sleep(delay.toMillis());
      }
      KeepalivedProcess victim = running.remove(node);
      long killedAt = victim.crash();
      String winner = null;
      long first = Long.MAX_VALUE;
      long deadline = killedAt + timeout.toNanos();
      long settle = Long.MAX_VALUE;
      while (System.nanoTime() < Math.min(deadline, settle)) {
        for (int i = 0; i < survivors.size(); i++) {
          OptionalLong at = watches.get(i).addedAt(vip, killedAt);
          if (at.isPresent() && at.getAsLong() < first) {
            first = at.getAsLong();
            winner = survivors.get(i);
          }
        }
        if (winner != null && settle == Long.MAX_VALUE) {
          // Lines are stamped on arrival; a short grace lets a slower reader report an earlier addition.
          settle = System.nanoTime() + 100_000_000L;
        }
        KeepalivedProcess.sleep(5);
      }
      if (winner == null) {
        throw new AssertionError(vip + " did not appear on any of " + survivors + " within " + timeout
            + " of crashing " + node + "\n" + diagnostics());
      }
      return new Takeover(node, winner, Duration.ofNanos(first - killedAt));
    } finally {
      watches.forEach(AddressWatch::close);
    }
  }

  /** Stops keepalived on every node (cleanly) and removes {@code vips} wherever a crashed node left them. */
  void stopAll(List<Ip> vips) {
    running.values().forEach(KeepalivedProcess::stop);
    running.clear();
    for (NetworkNamespace ns : namespaces.values()) {
      for (Ip vip : vips) {
        String prefix = vip.isIPv4() ? "/32" : "/128";
        String shown = ns.ip("-brief", "address", "show", "dev", INTERFACE).stdout();
        if ((" " + shown.replace('\n', ' ')).contains(" " + vip + "/")) {
          ns.ip("address", "del", vip + prefix, "dev", INTERFACE);
        }
      }
    }
  }

  /** Addresses of every node and the tail of every keepalived log, for failure messages. */
  String diagnostics() {
    StringBuilder b = new StringBuilder();
    namespaces.forEach((node, ns) -> b.append("== ").append(node).append(" addresses:\n").append(ns.addresses()));
    running.values().forEach(p -> {
      List<String> log = p.logText().lines().toList();
      b.append("== keepalived ").append(p.name()).append(" (last 30 lines of ").append(p.log()).append("):\n");
      log.subList(Math.max(0, log.size() - 30), log.size()).forEach(line -> b.append(line).append('\n'));
    });
    return b.toString();
  }

  @Override
  public void close() {
    RuntimeException failure = null;
    for (KeepalivedProcess process : running.values()) {
      try {
        process.stop();
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    running.clear();
    lab.close();
    if (failure != null) {
      throw failure;
    }
  }

  /** One measured takeover. */
  record Takeover(String crashed, String newMaster, Duration time) {
    double seconds() {
      return time.toNanos() / 1e9;
    }
  }
}
