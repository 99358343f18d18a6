package org.ipamoperators.keepalived.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/**
 * Decides which VRRP instances a group needs for its services, and which router-id keys they need ids for. Pure
 * and deterministic: the same services and nodes give the same plan, whatever order they come in.
 *
 * <h2>Instances</h2>
 *
 * <ul>
 *   <li><b>One instance per service</b> ({@code sharedInstances = 0}, the default and keepalived-operator's way):
 *       key {@code ns/name}, all the service's VIPs in it (any number; see {@link GroupSettings#maxAdvertisedVips}).
 *       No preferred node: the VIPs stay where they are when nodes come and go.
 *   <li><b>Spread VIPs</b> ({@code spreadvips: "true"}): one instance per VIP, key {@code ns/name/<ip>}. The VIPs
 *       of a service, in address order, are preferred by the nodes in name order round-robin, starting at a node
 *       picked by a hash of the service key (so the first VIPs of different services do not all land on one
 *       node). With as many nodes as VIPs, each VIP has its own node. The preferred node gets
 *       {@code ownerPriority}, the others distinct lower priorities (see {@link KeepalivedConfigRenderer#priority}).
 *   <li><b>Shared instances</b> ({@code sharedInstances = N}): for groups with more services than router ids. A
 *       service's VIPs go to instance {@code shared:<h mod N>}, h a SHA-256 hash of the service key (of
 *       {@code ns/name/<ip>} per VIP with spread VIPs), so adding or removing a service never moves another one.
 *       Instance {@code shared:k} is preferred by node {@code k mod nodes}: the shared instances, and with them the
 *       VIPs, spread over the nodes. A group then needs at most N router ids, with any number of services and
 *       VIPs. Services with verbatim lines or a health check keep an instance of their own (their lines and
 *       their check must not act on other services' VIPs).
 * </ul>
 *
 * A key whose VIPs are of both families gets an IPv4 and an IPv6 instance with the same router id.
 *
 * <h2>Problems</h2>
 *
 * Each problem concerns only its services: a service without VIP yet gets no instance and no key (no router id
 * wasted, no empty VIP block); a VIP listed by two services stays with the first in namespace/name order; refused
 * verbatim lines are left out; a key without a router id (none free) leaves only its own VIPs unannounced.
 */
public final class InstancePlanner {

  private InstancePlanner() {
  }

  /** The instances {@code services} need on {@code nodes}, before router ids. */
  public static InstancePlan plan(GroupSettings settings, List<ServiceVips> services, List<KeepalivedNode> nodes) {
    List<KeepalivedNode> sortedNodes = new ArrayList<>(nodes);
    sortedNodes.sort(Comparator.comparing(KeepalivedNode::name));
    List<String> nodeNames = sortedNodes.stream().map(KeepalivedNode::name).toList();
    List<ServiceVips> sorted = new ArrayList<>(services);
    sorted.sort(Comparator.comparing(ServiceVips::service));

    List<Problem> problems = new ArrayList<>();
    Map<Ip, ServiceRef> vipHolders = new HashMap<>();
    Map<String, Builder> instances = new TreeMap<>();
    ServiceRef previous = null;
    for (ServiceVips service : sorted) {
      ServiceRef ref = service.service();
      if (ref.equals(previous)) {
        throw new IllegalArgumentException("Service " + ref + " is listed twice");
      }
      previous = ref;
      SortedSet<Ip> vips = new TreeSet<>();
      for (Ip vip : service.vips()) {
        ServiceRef holder = vipHolders.putIfAbsent(vip, ref);
        if (holder == null) {
          vips.add(vip);
        } else {
          problems.add(new Problem(Problem.Kind.DUPLICATE_VIP, new TreeSet<>(List.of(ref)),
              "VIP " + vip + " is already announced for service " + holder + "; not announced for " + ref));
        }
      }
      if (vips.isEmpty()) {
        problems.add(new Problem(Problem.Kind.NO_VIP, new TreeSet<>(List.of(ref)), service.vips().isEmpty()
            ? "no VIP yet (no load-balancer ingress IP, no external IP): nothing to announce"
            : "all its VIPs are announced for other services"));
        continue;
      }
      Verbatim.Checked verbatim = Verbatim.checkService(service.verbatim());
      if (!verbatim.rejected().isEmpty()) {
        problems.add(new Problem(Problem.Kind.VERBATIM_REFUSED, new TreeSet<>(List.of(ref)),
            "verbatim lines refused: " + verbatim.rejected()));
      }
      Optional<HealthCheck> check = service.healthCheckPort().isPresent()
          ? Optional.of(new HealthCheck(ref, service.healthCheckPort().getAsInt()))
          : Optional.empty();
      boolean dedicated = settings.sharedInstances() == 0 || !verbatim.accepted().isEmpty() || check.isPresent();
      place(settings, service, vips, dedicated ? Optional.of(verbatim) : Optional.empty(), check, nodeNames,
          instances);
    }
    List<PlannedInstance> planned = instances.values().stream()
        .map(b -> new PlannedInstance(b.key, b.family, b.vips, b.owner, b.verbatim, b.healthChecks, b.services))
        .sorted(Comparator.comparing(PlannedInstance::key).thenComparing(PlannedInstance::family))
        .toList();
    return new InstancePlan(settings, sortedNodes, planned, problems);
  }

  /**
   * Puts the VIPs of one service into their instances: its own (one per VIP when spread) when it is
   * {@code dedicated} (it has verbatim lines or a health check, or the group shares no instances), else a shared
   * instance picked by hash. Each instance is owned by a node when its VIPs are spread.
   */
  private static void place(GroupSettings settings, ServiceVips service, SortedSet<Ip> vips,
      Optional<Verbatim.Checked> dedicated, Optional<HealthCheck> check, List<String> nodeNames,
      Map<String, Builder> instances) {
    ServiceRef ref = service.service();
    List<Ip> ordered = List.copyOf(vips);
    for (int i = 0; i < ordered.size(); i++) {
      Ip vip = ordered.get(i);
      String key;
      Optional<String> owner;
      if (dedicated.isPresent()) {
        key = service.spread() ? ref.key() + "/" + vip : ref.key();
        owner = service.spread() && !nodeNames.isEmpty()
            ? Optional.of(nodeNames.get(Math.floorMod(hash(ref.key()) + i, nodeNames.size())))
            : Optional.empty();
      } else {
        int bucket = (int) Math.floorMod(hash(service.spread() ? ref.key() + "/" + vip : ref.key()),
            (long) settings.sharedInstances());
        key = sharedKey(bucket);
        owner = nodeNames.isEmpty() ? Optional.empty() : Optional.of(nodeNames.get(bucket % nodeNames.size()));
      }
      Builder builder = instances.computeIfAbsent(key + "|" + vip.family(), k -> new Builder());
      builder.key = key;
      builder.family = vip.family();
      builder.owner = owner;
      builder.vips.add(vip);
      builder.services.add(ref);
      if (dedicated.isPresent()) {
        builder.verbatim.putAll(dedicated.get().accepted());
        check.ifPresent(builder.healthChecks::add);
      }
    }
  }

  /** The key of shared instance {@code index}: {@code shared:<index>} (a colon is in no namespace, so no clash). */
  public static String sharedKey(int index) {
    return "shared:" + index;
  }

  /** First 8 bytes of SHA-256, as a stable 64-bit hash (the same on every JVM and version). */
  static long hash(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      long h = 0;
      for (int i = 0; i < 8; i++) {
        h = (h << 8) | (digest[i] & 0xff);
      }
      return h;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private static final class Builder {
    private String key;
    private IpFamily family;
    private Optional<String> owner = Optional.empty();
    private final SortedSet<Ip> vips = new TreeSet<>();
    private final SortedMap<String, String> verbatim = new TreeMap<>();
    private final SortedSet<HealthCheck> healthChecks = new TreeSet<>();
    private final SortedSet<ServiceRef> services = new TreeSet<>();
  }
}
