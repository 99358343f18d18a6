package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;
import org.junit.jupiter.api.Test;

/** The planner's first-free walk picks what the allocator's first-free order picks, from any start below it. */
class FirstFreeTest {
  private static Optional<Ip> allocator(Pool p, IpFamily f, Map<Ip, String> taken) {
    Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
    Optional<Ip> ip = a.allocate(f);
    while (ip.isPresent() && taken.containsKey(ip.get())) {
      ip = a.allocate(f);
    }
    return ip;
  }

  @Test
  void walksTheUsableRangesInTheAllocatorsOrder() {
    List<Pool> pools = List.of(
        Pool.of("a", List.of("192.0.2.0/26", "198.51.100.0/28"), List.of("192.0.2.5-192.0.2.20", "192.0.2.40")),
        Pool.of("b", List.of("203.0.113.250-203.0.113.255", "192.0.2.128/29"), List.of()),
        Pool.of("c", List.of("2001:db8::/124"), List.of("2001:db8::3")));
    Random random = new Random(7);
    for (Pool p : pools) {
      IpFamily f = p.families().iterator().next();
      List<Ip> all = new java.util.ArrayList<>();
      Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
      for (Optional<Ip> ip = a.allocate(f); ip.isPresent(); ip = a.allocate(f)) {
        all.add(ip.get());
      }
      for (int round = 0; round < 200; round++) {
        Map<Ip, String> taken = new HashMap<>();
        double share = random.nextDouble();
        for (Ip ip : all) {
          if (random.nextDouble() < share) {
            taken.put(ip, "someone");
          }
        }
        Optional<Ip> expected = allocator(p, f, taken);
        assertThat(VipPlanner.firstFree(p, f, null, taken, Map.of())).as(p + " " + taken.keySet()).isEqualTo(expected);
        // Any start at or below the answer whose skipped addresses are all taken finds the same.
        Ip from = null;
        for (Ip ip : all) {
          if (expected.isPresent() && ip.equals(expected.get())) {
            break;
          }
          if (random.nextInt(4) == 0) {
            from = ip;
          }
        }
        assertThat(VipPlanner.firstFree(p, f, from, taken, Map.of())).isEqualTo(expected);
      }
      // A start past the pool finds nothing; a start between ranges continues in the next one.
      assertThat(VipPlanner.firstFree(p, f, all.get(all.size() - 1).next(), Map.of(), Map.of())).isEmpty();
    }
    Pool a = pools.get(0);
    assertThat(VipPlanner.firstFree(a, IpFamily.IPV4, Ip.parse("192.0.2.6"), Map.of(), Map.of()))
        .contains(Ip.parse("192.0.2.21"));
    assertThat(VipPlanner.firstFree(a, IpFamily.IPV4, Ip.parse("192.0.2.100"), Map.of(), Map.of()))
        .contains(Ip.parse("198.51.100.1")); // the /28's network address is not usable
  }
}
