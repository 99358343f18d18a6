package org.ipamoperators.cloud.aws;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.InstanceStateName;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterfaceIpv6Address;
import software.amazon.awssdk.services.ec2.model.NetworkInterfacePrivateIpAddress;
import software.amazon.awssdk.services.ec2.model.Subnet;
import software.amazon.awssdk.services.ec2.model.SubnetCidrBlockStateCode;
import software.amazon.awssdk.services.ec2.model.SubnetIpv6CidrBlockAssociation;
import software.amazon.awssdk.services.ec2.model.Tag;

/**
 * {@link NodeNetwork} on EC2: egress addresses are secondary private IPv4 addresses (or IPv6
 * addresses) of the device-index-0 ENI of the instance named by the node's {@code spec.providerID}.
 *
 * <p>Ownership: the addresses this operator attached to an ENI are listed in tags on it,
 * {@value #OWNED_TAGS_PREFIX}{@code <n>}, each value a space-separated list of addresses of at most
 * 256 characters (16 IPv4 or 6 IPv6 addresses per tag), so a dense ENI (49 IPv4 secondaries and
 * IPv6 addresses) needs a handful of tags, far from EC2's 50 tags per resource; the one-tag-per-address
 * form ({@value #OWNED_TAG_PREFIX}{@code <address>}) is read as well and replaced at the next write. Those tags are the cloud-side ledger: only listed addresses are ever
 * unassigned or moved away, so secondary addresses of other tools are never touched. An address
 * is listed before it is assigned, so a crash in between leaves a listed address that is not there
 * (ignored) rather than an address nobody owns.
 *
 * <p>{@link #describe} reports every secondary address of the ENI (the caller decides which are its
 * own), and among them those the tags list ({@link NodeAttachment#marked}); the capacity is the instance type's IPv4 addresses per interface, minus the primary, minus
 * secondary addresses this operator did not attach. Discovery failures are exceptions; {@link #apply}
 * gives one result per change, each failure with the EC2 call and AWS error code, and one node's
 * failure never stops another node's calls. Throttling and 5xx answers are retried by the SDK
 * (see {@link Ec2Clients}).
 */
public final class Ec2NodeNetwork implements NodeNetwork, AutoCloseable {
  public static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";
  public static final String BETA_INSTANCE_TYPE_LABEL = "beta.kubernetes.io/instance-type";
  /** Tag key prefix of the one-tag-per-address form (read, and replaced by packed tags when written). */
  public static final String OWNED_TAG_PREFIX = "ipam.ipamoperators.org/egress-ip/";
  /** Tag key prefix on an ENI: tags {@code <prefix>0, 1, ...} list the addresses this operator attached. */
  public static final String OWNED_TAGS_PREFIX = "ipam.ipamoperators.org/egress-ips-";
  static final int TAG_VALUE_MAX = 256;
  private static final Duration SUBNET_TTL = Duration.ofMinutes(5);
  private static final Duration SUBNET_MISS_TTL = Duration.ofSeconds(30);
  private static final Set<SubnetCidrBlockStateCode> GONE = Set.of(SubnetCidrBlockStateCode.DISASSOCIATING,
      SubnetCidrBlockStateCode.DISASSOCIATED, SubnetCidrBlockStateCode.FAILING, SubnetCidrBlockStateCode.FAILED);
  private static final Logger LOG = LoggerFactory.getLogger(Ec2NodeNetwork.class);

  private final Ec2Client ec2;
  private final boolean ownsClient;
  private final Clock clock;
  private final InstanceTypeLimits types;
  private final Map<String, NodeEni> nodes = new ConcurrentHashMap<>();
  private final Map<String, CachedSubnet> subnets = new ConcurrentHashMap<>();
  private final Map<String, Object> eniLocks = new ConcurrentHashMap<>();
  private volatile AllSubnets allSubnets;

  /** What {@link #describe} found of a node, for {@link #apply}. */
  record NodeEni(String node, String instanceId, String eniId, String subnetId, Set<Ip> secondaries,
      Set<Ip> tagged, boolean ipv6) {
    boolean owns(Ip ip) {
      return secondaries.contains(ip) && tagged.contains(ip);
    }

    String where() {
      return eniId + " of node " + node + " (" + instanceId + ")";
    }
  }

  private record CachedSubnet(List<IpRange> blocks, Instant expires) {}

  /** Every subnet of the account as last described: one paginated DescribeSubnets per TTL, not per pass. */
  private record AllSubnets(List<Subnet> subnets, Instant at) {}

  /** With an existing client, which the caller closes. */
  public Ec2NodeNetwork(Ec2Client ec2, Clock clock, Duration capacityCacheTtl) {
    this(ec2, false, clock, capacityCacheTtl);
  }

  private Ec2NodeNetwork(Ec2Client ec2, boolean ownsClient, Clock clock, Duration capacityCacheTtl) {
    this.ec2 = ec2;
    this.ownsClient = ownsClient;
    this.clock = clock;
    this.types = new InstanceTypeLimits(ec2, clock, capacityCacheTtl);
  }

  /** With a client of its own, built from the settings; {@link #close} closes it. */
  public static Ec2NodeNetwork create(AwsSettings settings) {
    return new Ec2NodeNetwork(Ec2Clients.build(settings), true, Clock.systemUTC(), settings.capacityCacheTtl());
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(true, true, true, true, true);
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    String instanceId = ProviderId.instanceId(node.providerId()).orElseThrow(() -> new NodeNetworkException(
        node.name(), "InvalidProviderID", "spec.providerID '" + node.providerId()
        + "' names no EC2 instance (expected aws:///<zone>/i-...)", false, null));
    try {
      Instance instance = Ec2CallFailed.call("DescribeInstances",
          () -> ec2.describeInstances(r -> r.instanceIds(instanceId))).reservations().stream()
          .flatMap(r -> r.instances().stream()).filter(i -> instanceId.equals(i.instanceId())).findFirst()
          .orElseThrow(() -> new Ec2CallFailed("DescribeInstances", "InvalidInstanceID.NotFound",
              "instance " + instanceId + " not found", false));
      InstanceStateName state = instance.state() == null ? null : instance.state().name();
      if (state == InstanceStateName.TERMINATED || state == InstanceStateName.SHUTTING_DOWN) {
        throw new Ec2CallFailed("DescribeInstances", "InstanceTerminated", "instance " + instanceId + " is "
            + state, false);
      }
      InstanceNetworkInterface primaryIf = primaryInterface(instance.networkInterfaces()).orElseThrow(
          () -> new Ec2CallFailed("DescribeInstances", "NoPrimaryNetworkInterface", "instance " + instanceId
              + " has no network interface at device index 0", false));
      NetworkInterface eni = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(primaryIf.networkInterfaceId())))
          .networkInterfaces().stream().findFirst().orElseThrow(() -> new Ec2CallFailed(
              "DescribeNetworkInterfaces", "InvalidNetworkInterfaceID.NotFound", "network interface "
              + primaryIf.networkInterfaceId() + " not found", false));
      Ip primary = null;
      // Concurrent sets: IPAMs reconcile in parallel and share this network's view of the nodes.
      Set<Ip> secondaries = new ConcurrentSkipListSet<>();
      for (NetworkInterfacePrivateIpAddress a : eni.privateIpAddresses()) {
        Ip ip = Ip.parse(a.privateIpAddress());
        if (Boolean.TRUE.equals(a.primary())) {
          primary = ip;
        } else {
          secondaries.add(ip);
        }
      }
      for (NetworkInterfaceIpv6Address a : eni.ipv6Addresses()) {
        secondaries.add(Ip.parse(a.ipv6Address()));
      }
      Set<Ip> tagged = ownedTags(eni.tagSet());
      List<IpRange> blocks = subnetBlocks(eni.subnetId());
      boolean ipv6 = blocks.stream().anyMatch(b -> !b.first().isIPv4());
      NodeEni found = new NodeEni(node.name(), instanceId, eni.networkInterfaceId(), eni.subnetId(),
          secondaries, tagged, ipv6);
      nodes.put(node.name(), found);
      String type = instanceType(node, instance);
      InstanceTypeLimits.Limits limits = types.of(type);
      long foreignV4 = secondaries.stream().filter(Ip::isIPv4).filter(ip -> !found.owns(ip)).count();
      int capacity = (int) Math.max(0, limits.ipv4Secondary() - foreignV4);
      Set<Ip> marked = secondaries.stream().filter(found::owns).collect(Collectors.toSet());
      return new NodeAttachment(node.name(), eni.networkInterfaceId(), blocks, primary, secondaries, capacity, marked);
    } catch (Ec2CallFailed f) {
      nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for " + instanceId + ": " + f.getMessage(),
          f.retryable, f);
    }
  }

  /** The interface at device index 0, whatever order the API lists the interfaces in. */
  static Optional<InstanceNetworkInterface> primaryInterface(List<InstanceNetworkInterface> interfaces) {
    return interfaces.stream()
        .filter(i -> i.attachment() != null && Integer.valueOf(0).equals(i.attachment().deviceIndex()))
        .findFirst();
  }

  private static String instanceType(NodeRef node, Instance instance) {
    String t = node.labels().get(INSTANCE_TYPE_LABEL);
    if (t == null || t.isBlank()) {
      t = node.labels().get(BETA_INSTANCE_TYPE_LABEL);
    }
    return t == null || t.isBlank() ? instance.instanceTypeAsString() : t;
  }

  /** The addresses the ownership tags list, in either form. */
  public static Set<Ip> ownedTags(List<Tag> tags) {
    Set<Ip> out = ConcurrentHashMap.newKeySet();
    for (Tag t : tags) {
      if (t.key() == null) {
        continue;
      }
      List<String> texts = t.key().startsWith(OWNED_TAGS_PREFIX) && t.value() != null
          ? List.of(t.value().trim().split(" +"))
          : t.key().startsWith(OWNED_TAG_PREFIX) ? List.of(t.key().substring(OWNED_TAG_PREFIX.length())) : List.of();
      for (String text : texts) {
        try {
          out.add(Ip.parse(text));
        } catch (RuntimeException e) {
          // not one of ours after all
        }
      }
    }
    return out;
  }

  private static Set<String> ownershipKeys(List<Tag> tags) {
    Set<String> out = ConcurrentHashMap.newKeySet();
    tags.stream().map(Tag::key).filter(k -> k != null && (k.startsWith(OWNED_TAGS_PREFIX) || k.startsWith(OWNED_TAG_PREFIX)))
        .forEach(out::add);
    return out;
  }

  /** The ownership tags listing {@code owned}: sorted addresses packed into values of at most 256 characters. */
  static List<Tag> packed(Set<Ip> owned) {
    List<Tag> out = new ArrayList<>();
    StringBuilder value = new StringBuilder();
    for (Ip ip : new TreeSet<>(owned)) {
      String text = ip.toString();
      if (value.length() > 0 && value.length() + 1 + text.length() > TAG_VALUE_MAX) {
        out.add(Tag.builder().key(OWNED_TAGS_PREFIX + out.size()).value(value.toString()).build());
        value.setLength(0);
      }
      if (value.length() > 0) {
        value.append(' ');
      }
      value.append(text);
    }
    if (value.length() > 0) {
      out.add(Tag.builder().key(OWNED_TAGS_PREFIX + out.size()).value(value.toString()).build());
    }
    return out;
  }

  private List<IpRange> subnetBlocks(String subnetId) {
    Instant now = clock.instant();
    CachedSubnet cached = subnets.get(subnetId);
    if (cached != null && now.isBefore(cached.expires())) {
      return cached.blocks();
    }
    Subnet s = Ec2CallFailed.call("DescribeSubnets", () -> ec2.describeSubnets(r -> r.subnetIds(subnetId)))
        .subnets().stream().findFirst().orElseThrow(() -> new Ec2CallFailed("DescribeSubnets",
            "InvalidSubnetID.NotFound", "subnet " + subnetId + " not found", false));
    List<IpRange> blocks = blocks(s);
    subnets.put(subnetId, new CachedSubnet(blocks, now.plus(SUBNET_TTL)));
    return blocks;
  }

  /** A subnet's IPv4 block and its associated IPv6 blocks. */
  private static List<IpRange> blocks(Subnet s) {
    List<IpRange> out = new ArrayList<>();
    if (s.cidrBlock() != null) {
      out.add(IpRange.parse(s.cidrBlock()));
    }
    for (SubnetIpv6CidrBlockAssociation a : s.ipv6CidrBlockAssociationSet()) {
      var state = a.ipv6CidrBlockState() == null ? null : a.ipv6CidrBlockState().state();
      boolean associated = state == null || !GONE.contains(state);
      if (associated && a.ipv6CidrBlock() != null) {
        out.add(IpRange.parse(a.ipv6CidrBlock()));
      }
    }
    return out;
  }

  /**
   * Every address of every ENI in the subnets that hold or overlap {@code range}, plus the five
   * addresses AWS reserves in each subnet block (the first four and the last). A range no subnet
   * overlaps is an error: such addresses cannot be attached to any ENI.
   */
  @Override
  public Set<Ip> addressesInUse(IpRange range) throws NodeNetworkException {
    try {
      Map<String, List<IpRange>> cached = holding(accountSubnets(SUBNET_TTL), range);
      // a subnet made since the last description: looked for again (at most every 30 s)
      Map<String, List<IpRange>> holding = cached.isEmpty() ? holding(accountSubnets(SUBNET_MISS_TTL), range) : cached;
      if (holding.isEmpty()) {
        throw new Ec2CallFailed("DescribeSubnets", "NoSubnetForCidr", "no subnet holds or overlaps " + range,
            false);
      }
      Set<Ip> used = new TreeSet<>();
      for (List<IpRange> blocks : holding.values()) {
        for (IpRange b : blocks) {
          Ip ip = b.first();
          for (int i = 0; i < 4; i++, ip = ip.next()) {
            used.add(ip);
          }
          used.add(b.last());
        }
      }
      List<NetworkInterface> enis = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfacesPaginator(r -> r.filters(Filter.builder().name("subnet-id")
              .values(holding.keySet()).build())).networkInterfaces().stream().toList());
      for (NetworkInterface eni : enis) {
        eni.privateIpAddresses().forEach(a -> used.add(Ip.parse(a.privateIpAddress())));
        eni.ipv6Addresses().forEach(a -> used.add(Ip.parse(a.ipv6Address())));
      }
      used.removeIf(ip -> !range.contains(ip));
      return used;
    } catch (Ec2CallFailed f) {
      throw new NodeNetworkException(range.toString(), f.code, f.describe(), f.retryable, f);
    }
  }

  /**
   * The account's subnets, described again only when the last description is older than {@code ttl}
   * (subnets change rarely; the ENIs in them are described on every call).
   */
  private List<Subnet> accountSubnets(Duration ttl) {
    Instant now = clock.instant();
    AllSubnets cached = allSubnets;
    if (cached != null && now.isBefore(cached.at().plus(ttl))) {
      return cached.subnets();
    }
    List<Subnet> all = Ec2CallFailed.call("DescribeSubnets",
        () -> ec2.describeSubnetsPaginator(r -> {}).subnets().stream().toList());
    allSubnets = new AllSubnets(all, now);
    return all;
  }

  private static Map<String, List<IpRange>> holding(List<Subnet> all, IpRange range) {
    Map<String, List<IpRange>> holding = new LinkedHashMap<>();
    for (Subnet s : all) {
      List<IpRange> overlapping = blocks(s).stream().filter(b -> b.family() == range.family() && b.overlaps(range))
          .toList();
      if (!overlapping.isEmpty()) {
        holding.put(s.subnetId(), overlapping);
      }
    }
    return holding;
  }

  /**
   * Attachments and moves first, per target node (make before break: a move is one
   * AssignPrivateIpAddresses with AllowReassignment), then detachments, per source node. Only nodes
   * whose set changes are called; an address already on its target ENI costs no call.
   */
  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    AddressChangeResult[] results = new AddressChangeResult[changes.size()];
    Map<String, List<Integer>> attach = new LinkedHashMap<>();
    Map<String, List<Integer>> detach = new LinkedHashMap<>();
    for (int i = 0; i < changes.size(); i++) {
      AddressChange c = changes.get(i);
      if (c.kind() == AddressChange.Kind.DETACH) {
        detach.computeIfAbsent(c.fromNode(), k -> new ArrayList<>()).add(i);
      } else {
        attach.computeIfAbsent(c.toNode(), k -> new ArrayList<>()).add(i);
      }
    }
    attach.forEach((node, idx) -> attachOn(node, idx, changes, results));
    detach.forEach((node, idx) -> detachFrom(node, idx, changes, results));
    return List.of(results);
  }

  /** The node's described ENI, or null after failing every change of {@code idx} (retryable). */
  private NodeEni describedOrFail(String node, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    NodeEni eni = nodes.get(node);
    if (eni == null) {
      idx.forEach(i -> results[i] = AddressChangeResult.failed(changes.get(i), "NodeNotDescribed",
          "node " + node + " has no known EC2 instance (its description failed or was never made)", true));
    }
    return eni;
  }

  /** The changes one node's ENI settles in one pass, indexed by address, and their results. */
  private record Batch(NodeEni eni, Map<Ip, Integer> pending, List<AddressChange> changes,
      AddressChangeResult[] results) {
    void applied(Ip ip) {
      results[pending.get(ip)] = AddressChangeResult.applied(changes.get(pending.get(ip)));
    }

    void failed(Ip ip, Ec2CallFailed f) {
      results[pending.get(ip)] = Ec2NodeNetwork.failed(changes.get(pending.get(ip)), f, eni);
    }
  }

  private void attachOn(String node, List<Integer> idx, List<AddressChange> changes, AddressChangeResult[] results) {
    NodeEni target = describedOrFail(node, idx, changes, results);
    if (target == null) {
      return;
    }
    Batch batch = new Batch(target, attachPending(target, idx, changes, results), changes, results);
    if (batch.pending().isEmpty()) {
      return;
    }
    Map<Ip, NetworkInterface> holders;
    try {
      holders = holders(target.subnetId(), batch.pending().keySet());
    } catch (Ec2CallFailed f) {
      batch.pending().keySet().forEach(ip -> batch.failed(ip, f));
      return;
    }
    Map<Ip, EniPlacement.Holder> byIp = new LinkedHashMap<>();
    holders.forEach((ip, eni) -> byIp.put(ip, new EniPlacement.Holder(eni.networkInterfaceId(),
        ownedTags(eni.tagSet()))));
    EniPlacement placement = EniPlacement.of(target.eniId(), batch.pending().keySet(), byIp);
    placement.refused().forEach((ip, holder) -> results[batch.pending().get(ip)] = AddressChangeResult.failed(
        changes.get(batch.pending().get(ip)), "AddressInUse", ip + " is held by " + holder
        + ", which this operator did not give it to: left alone", false));
    List<Ip> toTag = placement.toTag();
    if (toTag.isEmpty()) {
      return;
    }
    try {
      own(target, toTag);
    } catch (Ec2CallFailed f) {
      toTag.forEach(ip -> batch.failed(ip, f));
      return;
    }
    List<Ip> done = assignAll(batch, placement);
    done.addAll(keepUnansweredAssigns(batch, toTag, done));
    target.secondaries().addAll(done);
    releaseMoved(placement.movedFrom(), holders, done);
  }

  /**
   * The changes still to make on the target: an address it already owns is applied, an IPv6
   * address on a subnet with no IPv6 block fails; the rest, by address.
   */
  private static Map<Ip, Integer> attachPending(NodeEni target, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    Map<Ip, Integer> pending = new LinkedHashMap<>();
    for (int i : idx) {
      Ip ip = changes.get(i).address();
      if (target.owns(ip)) {
        results[i] = AddressChangeResult.applied(changes.get(i));
      } else if (!ip.isIPv4() && !target.ipv6()) {
        results[i] = AddressChangeResult.failed(changes.get(i), "SubnetHasNoIpv6", "the subnet of "
            + target.where() + " has no IPv6 block", false);
      } else {
        pending.put(ip, i);
      }
    }
    return pending;
  }

  /** The assign calls of a placement (moves first, make before break for IPv4); the addresses placed. */
  private List<Ip> assignAll(Batch batch, EniPlacement placement) {
    NodeEni target = batch.eni();
    placement.adopt().forEach(batch::applied);
    List<Ip> done = new ArrayList<>(placement.adopt());
    List<Ip> reassign = placement.reassign();
    List<Ip> assign = placement.assign();
    done.addAll(run(batch, reassign, () -> ec2.assignPrivateIpAddresses(r -> r
        .networkInterfaceId(target.eniId()).privateIpAddresses(strings(reassign)).allowReassignment(true)),
        "AssignPrivateIpAddresses"));
    done.addAll(run(batch, assign, () -> ec2.assignPrivateIpAddresses(r -> r
        .networkInterfaceId(target.eniId()).privateIpAddresses(strings(assign)).allowReassignment(false)),
        "AssignPrivateIpAddresses"));
    // IPv6 has no reassignment: a move unassigns from the old ENI first (break before make).
    List<Ip> v6Ready = new ArrayList<>(placement.assignV6());
    placement.v6From().forEach((eni, ips) -> {
      try {
        Ec2CallFailed.call("UnassignIpv6Addresses",
            () -> ec2.unassignIpv6Addresses(r -> r.networkInterfaceId(eni).ipv6Addresses(strings(ips))));
      } catch (Ec2CallFailed f) {
        ips.forEach(ip -> {
          batch.failed(ip, f);
          v6Ready.remove(ip);
        });
      }
    });
    done.addAll(run(batch, v6Ready, () -> ec2.assignIpv6Addresses(r -> r
        .networkInterfaceId(target.eniId()).ipv6Addresses(strings(v6Ready))), "AssignIpv6Addresses"));
    return done;
  }

  /**
   * After the assigns, for the tagged addresses not placed: an assign whose answer was lost (a reset,
   * a timeout after EC2 did the work) may have placed its addresses, so what the ENI holds now stays
   * listed and counts as done (returned). What it does not hold is not ours and loses its listing;
   * if the ENI cannot be read, the listing stays (a listed address that is not there grants
   * nothing, an address there but unlisted would belong to nobody).
   */
  private List<Ip> keepUnansweredAssigns(Batch batch, List<Ip> toTag, List<Ip> done) {
    List<Ip> untag = new ArrayList<>(toTag);
    untag.removeAll(done);
    if (untag.isEmpty()) {
      return List.of();
    }
    List<Ip> placed = new ArrayList<>();
    Set<Ip> held = heldNow(batch.eni());
    for (Ip ip : List.copyOf(untag)) {
      if (held == null || held.contains(ip)) {
        untag.remove(ip);
      }
      if (held != null && held.contains(ip)) {
        placed.add(ip);
        batch.applied(ip);
      }
    }
    if (!untag.isEmpty()) {
      disownQuietly(batch.eni(), untag); // what was not assigned is not ours
    }
    return placed;
  }

  /** The old ENIs of moved addresses let go and lose their tags (a stale tag alone grants nothing). */
  private void releaseMoved(Map<String, List<Ip>> movedFrom, Map<Ip, NetworkInterface> holders, List<Ip> done) {
    Map<String, List<Ip>> movedV4 = new LinkedHashMap<>();
    movedFrom.forEach((eni, ips) -> {
      List<Ip> moved = ips.stream().filter(Ip::isIPv4).filter(done::contains).toList();
      if (!moved.isEmpty()) {
        movedV4.put(eni, moved);
      }
    });
    letGo(movedV4);
    movedFrom.forEach((eni, ips) -> {
      List<Ip> moved = ips.stream().filter(done::contains).toList();
      if (!moved.isEmpty()) {
        NodeEni known = nodes.values().stream().filter(n -> n.eniId().equals(eni)).findFirst().orElse(null);
        if (known != null) {
          known.secondaries().removeAll(moved);
          disownQuietly(known, moved);
        } else {
          NetworkInterface holder = holders.values().stream().filter(h -> h.networkInterfaceId().equals(eni))
              .findFirst().orElseThrow();
          disownQuietly(new NodeEni("(not a node)", "", eni, holder.subnetId(), ConcurrentHashMap.newKeySet(),
              ownedTags(holder.tagSet()), false), moved);
        }
      }
    });
  }

  /** The secondary addresses (IPv4 and IPv6) the ENI holds now, or null when it cannot be read. */
  private Set<Ip> heldNow(NodeEni target) {
    try {
      NetworkInterface eni = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(target.eniId()))).networkInterfaces()
          .stream().findFirst().orElse(null);
      if (eni == null) {
        return null;
      }
      Set<Ip> held = new HashSet<>();
      eni.privateIpAddresses().forEach(a -> held.add(Ip.parse(a.privateIpAddress())));
      eni.ipv6Addresses().forEach(a -> held.add(Ip.parse(a.ipv6Address())));
      return held;
    } catch (Ec2CallFailed f) {
      LOG.info("could not read {} after a failed assign: {} ({}); its ownership tags stay", target.where(),
          f.getMessage(), f.code);
      return null;
    }
  }

  /** One assign or unassign call for a group; the addresses it placed, results filled either way. */
  private List<Ip> run(Batch batch, List<Ip> ips, Runnable call, String name) {
    if (ips.isEmpty()) {
      return List.of();
    }
    try {
      Ec2CallFailed.call(name, () -> {
        call.run();
        return null;
      });
      ips.forEach(batch::applied);
      return ips;
    } catch (Ec2CallFailed f) {
      LOG.warn("{} on {} for {}: {} ({})", name, batch.eni().where(), ips, f.getMessage(), f.code);
      ips.forEach(ip -> batch.failed(ip, f));
      return List.of();
    }
  }

  /**
   * The ENIs holding the addresses now, by address. An address of a subnet can only be on an ENI of
   * that subnet, so one listing of the subnet's ENIs answers for all of them.
   */
  private Map<Ip, NetworkInterface> holders(String subnetId, Set<Ip> ips) {
    Map<Ip, NetworkInterface> out = new LinkedHashMap<>();
    for (NetworkInterface eni : enisOf(subnetId)) {
      eni.privateIpAddresses().stream().map(a -> Ip.parse(a.privateIpAddress())).filter(ips::contains)
          .forEach(ip -> out.put(ip, eni));
      eni.ipv6Addresses().stream().map(a -> Ip.parse(a.ipv6Address())).filter(ips::contains)
          .forEach(ip -> out.put(ip, eni));
    }
    return out;
  }

  private List<NetworkInterface> enisOf(String subnetId) {
    return Ec2CallFailed.call("DescribeNetworkInterfaces", () -> ec2.describeNetworkInterfacesPaginator(r -> r
        .filters(Filter.builder().name("subnet-id").values(subnetId).build())).networkInterfaces().stream().toList());
  }

  /**
   * EC2 takes a reassigned address off its old ENI; moto 5.1 does not, and a read may lag. The old
   * ENIs are checked once and let go of explicitly, so an address never stays on two ENIs. Only
   * addresses this operator owned there (checked before the move) are concerned.
   */
  private void letGo(Map<String, List<Ip>> movedFrom) {
    if (movedFrom.isEmpty()) {
      return;
    }
    try {
      List<NetworkInterface> old = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(movedFrom.keySet())).networkInterfaces());
      for (NetworkInterface eni : old) {
        List<Ip> moved = movedFrom.get(eni.networkInterfaceId());
        List<Ip> still = eni.privateIpAddresses().stream().map(a -> Ip.parse(a.privateIpAddress()))
            .filter(moved::contains).toList();
        if (!still.isEmpty()) {
          Ec2CallFailed.call("UnassignPrivateIpAddresses", () -> ec2.unassignPrivateIpAddresses(r -> r
              .networkInterfaceId(eni.networkInterfaceId()).privateIpAddresses(strings(still))));
        }
      }
    } catch (Ec2CallFailed f) {
      // The move itself succeeded; the old ENI (gone with its instance, say) is looked at again later.
      LOG.info("after moving {}: {} ({})", movedFrom, f.describe(), f.code);
    }
  }

  private void detachFrom(String node, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    NodeEni source = describedOrFail(node, idx, changes, results);
    if (source == null) {
      return;
    }
    Map<Ip, Integer> pending = new LinkedHashMap<>();
    for (int i : idx) {
      Ip ip = changes.get(i).address();
      if (!source.secondaries().contains(ip)) {
        results[i] = AddressChangeResult.applied(changes.get(i)); // gone already
      } else if (!source.owns(ip)) {
        results[i] = AddressChangeResult.skipped(changes.get(i), ip + " on " + source.where()
            + " was not attached by this operator: left alone");
      } else {
        pending.put(ip, i);
      }
    }
    List<Ip> v4 = pending.keySet().stream().filter(Ip::isIPv4).toList();
    List<Ip> v6 = pending.keySet().stream().filter(ip -> !ip.isIPv4()).toList();
    Batch batch = new Batch(source, pending, changes, results);
    List<Ip> done = new ArrayList<>();
    done.addAll(run(batch, v4, () -> ec2.unassignPrivateIpAddresses(r -> r
        .networkInterfaceId(source.eniId()).privateIpAddresses(strings(v4))), "UnassignPrivateIpAddresses"));
    done.addAll(run(batch, v6, () -> ec2.unassignIpv6Addresses(r -> r
        .networkInterfaceId(source.eniId()).ipv6Addresses(strings(v6))), "UnassignIpv6Addresses"));
    if (!done.isEmpty()) {
      source.secondaries().removeAll(done);
      disownQuietly(source, done);
    }
  }

  /** Lists {@code ips} in the ENI's ownership tags (before they are assigned). */
  private void own(NodeEni eni, List<Ip> ips) {
    changeOwnership(eni, ips, true);
  }

  private void disownQuietly(NodeEni eni, List<Ip> ips) {
    try {
      changeOwnership(eni, ips, false);
    } catch (Ec2CallFailed f) {
      // A listed address that is not there grants nothing; it is rewritten or ignored later.
      LOG.info("could not remove {} from the ownership tags of {}: {} ({})", ips, eni.eniId(), f.getMessage(), f.code);
    }
  }

  /**
   * Read, change, write of the ENI's ownership list, one ENI at a time in this process, from the
   * tags as EC2 has them now (IPAMs reconciled in parallel may have written since this view was
   * described): one DescribeNetworkInterfaces, one CreateTags with the packed tags (it overwrites
   * their values), one DeleteTags for keys not in use (surplus packed tags, tags of the
   * one-per-address form).
   */
  private void changeOwnership(NodeEni eni, List<Ip> ips, boolean add) {
    synchronized (eniLocks.computeIfAbsent(eni.eniId(), k -> new Object())) {
      List<Tag> current = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(eni.eniId()))).networkInterfaces().stream()
          .findFirst().map(NetworkInterface::tagSet).orElse(List.of());
      Set<Ip> owned = new TreeSet<>(ownedTags(current));
      if (add) {
        owned.addAll(ips);
      } else {
        owned.removeAll(ips);
      }
      List<Tag> tags = packed(owned);
      Set<String> keys = tags.stream().map(Tag::key).collect(Collectors.toSet());
      List<String> stale = ownershipKeys(current).stream().filter(k -> !keys.contains(k)).sorted().toList();
      if (!tags.isEmpty()) {
        Ec2CallFailed.call("CreateTags", () -> ec2.createTags(r -> r.resources(eni.eniId()).tags(tags)));
      }
      if (!stale.isEmpty()) {
        Ec2CallFailed.call("DeleteTags", () -> ec2.deleteTags(r -> r.resources(eni.eniId())
            .tags(stale.stream().map(k -> Tag.builder().key(k).build()).toList())));
      }
      eni.tagged().retainAll(owned);
      eni.tagged().addAll(owned);
    }
  }

  private static AddressChangeResult failed(AddressChange c, Ec2CallFailed f, NodeEni on) {
    return AddressChangeResult.failed(c, f.code, f.call + " on " + on.where() + ": " + f.getMessage(), f.retryable);
  }

  private static List<String> strings(List<Ip> ips) {
    return ips.stream().sorted(Comparator.naturalOrder()).map(Ip::toString).collect(Collectors.toList());
  }

  @Override
  public void close() {
    if (ownsClient) {
      ec2.close();
    }
  }
}
