package org.ipamoperators.benchmarks;

import java.util.List;
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
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * 1,000,000 allocations from a fresh pool per invocation: an IPv4 /8 for each strategy, and an IPv6
 * /64 with RANDOM (the case where every allocation splits a free range). Scores are allocations
 * per second.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class AllocationBenchmark {
  static final int N = 1_000_000;

  @Param({"10.0.0.0/8:FIRST_FREE", "10.0.0.0/8:RANDOM", "10.0.0.0/8:STICKY", "2001:db8::/64:RANDOM"})
  public String poolAndStrategy;

  private Pool pool;
  private AllocationStrategy strategy;
  private IpFamily family;
  private Allocator allocator;
  private String[] owners;

  @Setup(Level.Trial)
  public void pool() {
    int colon = poolAndStrategy.lastIndexOf(':');
    pool = Pool.of("bench", List.of(poolAndStrategy.substring(0, colon)), List.of());
    strategy = AllocationStrategy.valueOf(poolAndStrategy.substring(colon + 1));
    family = pool.families().iterator().next();
    owners = new String[N];
    for (int i = 0; i < N; i++) {
      owners[i] = "namespace-" + i;
    }
  }

  @Setup(Level.Invocation)
  public void freshAllocator() {
    allocator = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(42));
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void allocateOneMillion(Blackhole bh) {
    Allocator a = allocator;
    for (int i = 0; i < N; i++) {
      Ip ip = a.allocate(family, strategy, owners[i]).orElseThrow();
      bh.consume(ip);
    }
  }
}
