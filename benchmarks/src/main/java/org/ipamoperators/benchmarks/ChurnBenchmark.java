package org.ipamoperators.benchmarks;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Steady-state churn: a pool holding 500,000 randomly placed addresses; each operation releases a
 * random held address and allocates a new one, so the free-range count stays high. Score: release
 * plus allocate pairs per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class ChurnBenchmark {
  static final int HELD = 500_000;

  @Param({"FIRST_FREE", "RANDOM"})
  public AllocationStrategy strategy;

  private Allocator allocator;
  private Ip[] held;
  private SplittableRandom random;

  @Setup
  public void fill() {
    Pool pool = Pool.of("bench", List.of("10.0.0.0/12"), List.of());
    Allocator filler = Allocator.create(pool, AllocatorOptions.of(AllocationStrategy.RANDOM).withSeed(1));
    held = new Ip[HELD];
    for (int i = 0; i < HELD; i++) {
      held[i] = filler.allocate(IpFamily.IPV4).orElseThrow();
    }
    allocator = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(2));
    for (Ip ip : held) {
      allocator.claim(ip);
    }
    random = new SplittableRandom(3);
  }

  @Benchmark
  public Ip releaseAndAllocate() {
    int i = random.nextInt(HELD);
    allocator.release(held[i]);
    Ip ip = allocator.allocate(IpFamily.IPV4).orElseThrow();
    held[i] = ip;
    return ip;
  }
}
