package org.ipamoperators.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.List;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;

/**
 * Heap retained by an allocator after 1,000,000 allocations, per allocated address. Run with
 * {@code java -cp benchmarks/target/benchmarks.jar org.ipamoperators.benchmarks.HeapFootprint};
 * it measures used heap after full GCs before and after, with the allocator kept reachable.
 */
public final class HeapFootprint {
  private HeapFootprint() {}

  public static void main(String[] args) {
    int n = 1_000_000;
    String[][] cases = {
        {"10.0.0.0/8", "FIRST_FREE"}, {"10.0.0.0/8", "RANDOM"}, {"10.0.0.0/8", "STICKY"},
        {"2001:db8::/64", "RANDOM"}, {"2001:db8::/48", "RANDOM"}};
    System.out.printf("%-16s %-11s %12s %14s %10s%n", "pool", "strategy", "free ranges", "retained bytes",
        "bytes/IP");
    for (String[] c : cases) {
      Pool pool = Pool.of("heap", List.of(c[0]), List.of());
      IpFamily family = pool.families().iterator().next();
      AllocationStrategy s = AllocationStrategy.valueOf(c[1]);
      long before = usedAfterGc();
      Allocator a = Allocator.create(pool, AllocatorOptions.of(s).withSeed(5));
      for (int i = 0; i < n; i++) {
        a.allocate(family, s, "namespace-" + i).orElseThrow();
      }
      long after = usedAfterGc();
      long retained = after - before;
      System.out.printf("%-16s %-11s %12d %14d %10.1f%n", c[0], c[1], a.freeRangeCount(family), retained,
          retained / (double) n);
      if (a.allocatedCount(family).longValue() != n) {
        throw new IllegalStateException("allocator lost count");
      }
    }
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 4; i++) {
      System.gc();
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
