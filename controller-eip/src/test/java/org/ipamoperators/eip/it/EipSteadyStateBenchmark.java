package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.EipSettings;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.eip.api.EipStatus;
import org.ipamoperators.eip.plan.AddressPlan;
import org.ipamoperators.eip.plan.EipTags;
import org.junit.jupiter.api.Test;

/**
 * Steady state (a measurement, not part of the default run): {@code ipam.steady.eips} pod-mode Eips (100 by
 * default), their pods absent so that nothing changes, each with its address, and the operator's default resync
 * (2 minutes; {@code -Dipam.steady.resync=3s} sets another) and orphan sweep interval. Set-up does not go through
 * the operator: the Eips are created, then one address per Eip is allocated in moto with the tags the controller
 * gives its own and recorded in the Eip's status, as a restarted operator finds them; then the operator starts.
 * Printed: the time until every Eip is settled (Ready=False, PodNotFound, its own address) and the EC2 calls made
 * meanwhile, then DescribeAddresses and all EC2 calls per resync pass over {@code ipam.steady.passes} passes (3),
 * split by the controller that made them. Run with {@code mvn -pl controller-eip -am verify
 * -Dit.test=EipSteadyStateBenchmark -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false
 * -Dfailsafe.failIfNoSpecifiedTests=false -Dipam.steady.eips=1000}.
 */
class EipSteadyStateBenchmark extends EipIT {
  private static final int EIPS = Integer.getInteger("ipam.steady.eips", 100);
  private static final int PASSES = Integer.getInteger("ipam.steady.passes", 3);
  private static final String EIP_RECONCILER = "ReconcilerExecutor-eips-";
  private static final String SWEEP = "ReconcilerExecutor-eip-orphan-sweep-";

  @Test
  void ec2CallsPerResyncPass() throws InterruptedException {
    EipSettings defaults = EipSettings.from(Map.of(EipSettings.CLUSTER_NAME, EipWorld.CLUSTER,
        EipSettings.AWS_REGION, "us-east-1"));
    String resyncProperty = System.getProperty("ipam.steady.resync");
    Duration resync = resyncProperty == null ? defaults.resyncInterval()
        : Duration.ofSeconds(Long.parseLong(resyncProperty.replaceAll("s$", "")));
    Map<String, String> seeded = seed(); // Eip name -> allocation id

    Instant start = Instant.now();
    world.start(server, moto, world.settings(Map.of(EipSettings.RESYNC_INTERVAL, resync.toSeconds() + "s",
        EipSettings.ORPHAN_SWEEP_INTERVAL, defaults.sweepInterval().toSeconds() + "s")));
    await().atMost(Duration.ofMinutes(20)).pollInterval(Duration.ofSeconds(2))
        .until(() -> settled(seeded) == EIPS);
    Duration settle = Duration.between(start, Instant.now());
    int settleCalls = world.callers.size();
    long settleReconciles = world.eipReconciles.get();

    // A fixed window of whole passes: this is a measurement.
    Thread.sleep(resync.toMillis() * PASSES);
    List<EipWorld.Call> measured = new ArrayList<>(world.callers.subList(settleCalls, world.callers.size()));
    long reconciles = world.eipReconciles.get() - settleReconciles;
    List<EipWorld.Call> atSettle = new ArrayList<>(world.callers.subList(0, settleCalls));

    System.out.printf("steady state: %d Eips, resync %d s, orphan sweep %d s, load average %s%n", EIPS,
        resync.toSeconds(), defaults.sweepInterval().toSeconds(), loadAverage());
    System.out.printf("  settle after start: %.1f s, %d Eip reconciles; EC2 calls by the Eip reconciler %s,"
        + " by the orphan sweep %s%n", settle.toMillis() / 1000.0, settleReconciles,
        byOperation(atSettle, c -> c.thread().startsWith(EIP_RECONCILER)),
        byOperation(atSettle, c -> c.thread().startsWith(SWEEP)));
    long describes = count(measured, c -> c.thread().startsWith(EIP_RECONCILER)
        && "DescribeAddresses".equals(c.operation()));
    long allDescribes = count(measured, c -> "DescribeAddresses".equals(c.operation()));
    System.out.printf("  per pass over %d passes (%.2f Eip reconciles per Eip per pass): DescribeAddresses %.2f by"
        + " the Eip reconciler (%.4f per Eip), %.2f in all; all EC2 calls %.2f; over the %d passes: Eip reconciler"
        + " %s, orphan sweep %s%n", PASSES, reconciles / (double) EIPS / PASSES, describes / (double) PASSES,
        describes / (double) PASSES / EIPS, allDescribes / (double) PASSES, measured.size() / (double) PASSES,
        PASSES, byOperation(measured, c -> c.thread().startsWith(EIP_RECONCILER)),
        byOperation(measured, c -> c.thread().startsWith(SWEEP)));

    // Every Eip kept the address it was given: nothing allocated, so the counts are of the steady state itself.
    assertThat(world.count("AllocateAddress")).isZero();
    assertThat(settled(seeded)).isEqualTo(EIPS);
    // Shared, not per Eip: at most one snapshot per snapshot age (a quarter of the resync, at most 30 s) in a pass,
    // whatever the number of Eips (one more for a pass cut by the window's edges).
    assertThat(describes).isLessThanOrEqualTo(Math.max(4, resync.toSeconds() / 30) * PASSES + 1);
    // Each Eip was reconciled in the window (its last pass may fall just after it): the counts are of real passes.
    assertThat(reconciles).isGreaterThanOrEqualTo((long) EIPS * (PASSES - 1));
  }

  /**
   * The Eips, then one address each, tagged by {@link EipTags} and {@link AddressPlan#allocationTags} as the
   * controller tags its own (through a client whose calls are not counted), recorded in the Eip's status; the Eips
   * carry the controller's finalizer already.
   */
  private Map<String, String> seed() {
    ElasticIps uncounted = new ElasticIps(world.ec2);
    Map<String, String> seeded = new TreeMap<>();
    for (int i = 0; i < EIPS; i++) {
      EipSelector selector = EipSelector.pod("absent-" + i);
      Eip e = new Eip();
      e.getMetadata().setName("e" + i);
      e.getMetadata().setFinalizers(List.of(EipNames.EIP_FINALIZER)); // as the operator left it before a restart
      e.setSpec(EipSpec.of(selector));
      e = world.kube.resource(e).create();
      ElasticIp a = uncounted.allocate(AddressPlan.allocationTags(EipTags.of(EipWorld.CLUSTER, world.ns,
          e.getMetadata().getName(), e.getMetadata().getUid(), selector, Map.of()), Instant.now()), null);
      world.kube.resources(Eip.class).withName(e.getMetadata().getName()).editStatus(x -> {
        x.setStatus(new EipStatus(a.allocationId(), a.publicIp(), null, null, null, null, null, null));
        return x;
      });
      seeded.put(e.getMetadata().getName(), a.allocationId());
    }
    return seeded;
  }

  /** Eips whose status says PodNotFound and names the address seeded for them. */
  private long settled(Map<String, String> seeded) {
    return world.kube.resources(Eip.class).list().getItems().stream().filter(e -> e.getStatus() != null
        && seeded.get(e.getMetadata().getName()).equals(e.getStatus().allocationId())
        && e.getStatus().conditions() != null && e.getStatus().conditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "PodNotFound".equals(c.getReason()))).count();
  }

  private static long count(List<EipWorld.Call> calls, Predicate<EipWorld.Call> which) {
    return calls.stream().filter(which).count();
  }

  private static Map<String, Long> byOperation(List<EipWorld.Call> calls, Predicate<EipWorld.Call> which) {
    Map<String, Long> by = new TreeMap<>();
    calls.stream().filter(which).forEach(c -> by.merge(c.operation(), 1L, Long::sum));
    return by;
  }

  private static String loadAverage() {
    try {
      String[] a = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ", 4);
      return a[0] + " " + a[1] + " " + a[2];
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }
}
