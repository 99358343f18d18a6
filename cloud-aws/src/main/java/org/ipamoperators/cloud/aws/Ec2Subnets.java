package org.ipamoperators.cloud.aws;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.Subnet;
import software.amazon.awssdk.services.ec2.model.SubnetCidrBlockStateCode;
import software.amazon.awssdk.services.ec2.model.SubnetIpv6CidrBlockAssociation;

/**
 * The subnets' address blocks, described again only when their cached description is older than a
 * TTL (subnets change rarely), and the addresses in use in a range (the ENIs in the subnets are
 * described on every call). Failures are {@link Ec2CallFailed}.
 */
final class Ec2Subnets {
  private static final Duration SUBNET_TTL = Duration.ofMinutes(5);
  private static final Duration SUBNET_MISS_TTL = Duration.ofSeconds(30);
  private static final Set<SubnetCidrBlockStateCode> GONE = Set.of(SubnetCidrBlockStateCode.DISASSOCIATING,
      SubnetCidrBlockStateCode.DISASSOCIATED, SubnetCidrBlockStateCode.FAILING, SubnetCidrBlockStateCode.FAILED);

  private final Ec2Client ec2;
  private final Clock clock;
  private final Map<String, CachedSubnet> subnets = new ConcurrentHashMap<>();
  private volatile AllSubnets allSubnets;

  private record CachedSubnet(List<IpRange> blocks, Instant expires) {}

  /** Every subnet of the account as last described: one paginated DescribeSubnets per TTL, not per pass. */
  private record AllSubnets(List<Subnet> subnets, Instant at) {}

  Ec2Subnets(Ec2Client ec2, Clock clock) {
    this.ec2 = ec2;
    this.clock = clock;
  }

  /** The blocks of one subnet, described at most once per TTL. */
  List<IpRange> blocks(String subnetId) {
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

  /** See {@link Ec2NodeNetwork#addressesInUse}. */
  Set<Ip> addressesInUse(IpRange range) {
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
}
