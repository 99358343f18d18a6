package org.ipamoperators.cloud.azure;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.ipamoperators.core.address.IpRange;

/** State shared by the views of one Azure network (one per load-balancer policy): nodes, NIC locks, caches. */
final class AzureNetworkState {
  /** How long a subnet's prefixes, and the list of VNets, are taken as read. */
  static final Duration SUBNET_TTL = Duration.ofMinutes(5);

  final Map<String, NicState> nodes = new ConcurrentHashMap<>();
  final Map<String, Object> nicLocks = new ConcurrentHashMap<>();
  final Map<String, CachedSubnet> subnets = new ConcurrentHashMap<>();
  final Set<String> outboundPools = ConcurrentHashMap.newKeySet();
  final ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
    Thread t = new Thread(r, "azure-nic");
    t.setDaemon(true);
    return t;
  });
  final AzureMetrics metrics;
  final Clock clock;
  volatile VnetList vnetList;

  AzureNetworkState(AzureMetrics metrics, Clock clock) {
    this.metrics = metrics;
    this.clock = clock;
  }

  record CachedSubnet(List<IpRange> blocks, Instant expires) {}

  /** VNet ids and their subnets' prefixes. */
  record VnetList(Map<String, List<IpRange>> vnets, Instant expires) {}

  /** The lock each read, decision and PUT of one NIC holds. */
  Object nicLock(String nicId) {
    return nicLocks.computeIfAbsent(nicId.toLowerCase(java.util.Locale.ROOT), k -> new Object());
  }
}
