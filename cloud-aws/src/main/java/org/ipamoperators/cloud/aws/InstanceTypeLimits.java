package org.ipamoperators.cloud.aws;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.InstanceTypeInfo;

/**
 * Addresses per interface of each instance type, from DescribeInstanceTypes, cached for a while:
 * they never change for a type, but a cache that expires picks up a corrected answer.
 */
final class InstanceTypeLimits {
  /** IPv4 addresses per interface (the primary included) and IPv6 addresses per interface. */
  record Limits(int ipv4PerInterface, int ipv6PerInterface) {
    int ipv4Secondary() {
      return Math.max(0, ipv4PerInterface - 1);
    }
  }

  private record Entry(Limits limits, Instant expires) {}

  private final Ec2Client ec2;
  private final Clock clock;
  private final Duration ttl;
  private final Map<String, Entry> cache = new ConcurrentHashMap<>();

  InstanceTypeLimits(Ec2Client ec2, Clock clock, Duration ttl) {
    this.ec2 = ec2;
    this.clock = clock;
    this.ttl = ttl;
  }

  /** The limits of the type; a failed or empty answer is an {@link Ec2CallFailed}, never a zero. */
  Limits of(String instanceType) {
    Instant now = clock.instant();
    Entry e = cache.get(instanceType);
    if (e != null && now.isBefore(e.expires())) {
      return e.limits();
    }
    var answer = Ec2CallFailed.call("DescribeInstanceTypes",
        () -> ec2.describeInstanceTypes(r -> r.instanceTypesWithStrings(instanceType)));
    InstanceTypeInfo info = answer.instanceTypes().stream().findFirst().orElseThrow(() -> new Ec2CallFailed(
        "DescribeInstanceTypes", "UnknownInstanceType", "no instance type " + instanceType, false));
    var net = info.networkInfo();
    Limits limits = new Limits(net.ipv4AddressesPerInterface() == null ? 1 : net.ipv4AddressesPerInterface(),
        Boolean.TRUE.equals(net.ipv6Supported()) && net.ipv6AddressesPerInterface() != null
            ? net.ipv6AddressesPerInterface() : 0);
    cache.put(instanceType, new Entry(limits, now.plus(ttl)));
    return limits;
  }

  int lookups() {
    return cache.size();
  }
}
