package org.ipamoperators.benchmarks;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.IpDemand;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.placement.PlacementPlanner;
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
 * The planner on 1,000 nodes in 3 zones and 20,000 addresses (owners with two addresses each).
 * "fresh": nothing placed yet. "failover": everything placed, then 5% of the nodes fail, so their
 * addresses move. "steady": everything placed, nothing to do. Score: milliseconds per plan.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class PlannerBenchmark {
  static final int NODES = 1_000;
  static final int ADDRESSES = 20_000;
  static final String[] ZONES = {"zone-a", "zone-b", "zone-c"};

  @Param({"fresh", "failover", "steady"})
  public String scenario;

  private List<NodeState> nodes;
  private List<IpDemand> demands;

  @Setup
  public void build() {
    SplittableRandom r = new SplittableRandom(11);
    demands = new ArrayList<>();
    for (int i = 0; i < ADDRESSES; i++) {
      demands.add(new IpDemand(Ip.v4(0x0A000000L + i), ZONES[i % 3], "ns-" + (i / 2)));
    }
    List<NodeState> empty = new ArrayList<>();
    for (int n = 0; n < NODES; n++) {
      empty.add(new NodeState(String.format("node-%04d", n), ZONES[n % 3], true, 30 + r.nextInt(20), Set.of()));
    }
    if (scenario.equals("fresh")) {
      nodes = empty;
      return;
    }
    PlacementPlan placed = PlacementPlanner.plan(empty, demands, PlacementOptions.DEFAULT);
    nodes = new ArrayList<>();
    Set<Integer> failed = new HashSet<>();
    if (scenario.equals("failover")) {
      while (failed.size() < NODES / 20) {
        failed.add(r.nextInt(NODES));
      }
    }
    for (int n = 0; n < NODES; n++) {
      NodeState e = empty.get(n);
      nodes.add(new NodeState(e.name(), e.group(), !failed.contains(n), e.capacity(),
          placed.assignments().get(e.name())));
    }
  }

  @Benchmark
  public PlacementPlan plan() {
    return PlacementPlanner.plan(nodes, demands, PlacementOptions.DEFAULT);
  }
}
