package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipSelector;
import org.junit.jupiter.api.Test;

/**
 * Steady state (a measurement, not part of the default run): {@code ipam.steady.eips} Eips (100 by default), each
 * with its address, nothing changing, the resync at 3 s. Printed: DescribeAddresses calls per resync interval over
 * {@code ipam.steady.intervals} intervals (5), i.e. what every Eip's periodic check against AWS costs
 * ({@code -Dipam.steady.resync=120s} measures the default resync). Run with
 * {@code mvn -pl controller-eip -am verify -Dit.test=EipSteadyStateBenchmark -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}.
 */
class EipSteadyStateBenchmark extends EipIT {
  private static final int EIPS = Integer.getInteger("ipam.steady.eips", 100);
  private static final int INTERVALS = Integer.getInteger("ipam.steady.intervals", 5);

  @Test
  void describeAddressesPerResyncInterval() throws InterruptedException {
    world.start(server, moto);
    for (int i = 0; i < EIPS; i++) {
      world.eip("e" + i, EipSelector.pod("absent-" + i));
    }
    await().atMost(Duration.ofMinutes(20)).until(() -> world.kube.resources(Eip.class).list().getItems().stream()
        .filter(e -> e.getStatus() != null && e.getStatus().allocationId() != null
            && "PodNotFound".equals(world.condition(e.getMetadata().getName(), "Ready").getReason())).count() == EIPS);
    assertThat(world.addresses()).hasSize(EIPS);
    // Settle for one interval, then count over the measured ones (a fixed window: this is a measurement).
    Thread.sleep(EipWorld.RESYNC.toMillis());
    long before = world.count("DescribeAddresses");
    long calls = world.calls.size();
    Thread.sleep(EipWorld.RESYNC.toMillis() * INTERVALS);
    long describes = world.count("DescribeAddresses") - before;
    long all = world.calls.size() - calls;
    System.out.printf("steady state: %d Eips, resync %d s: %.1f DescribeAddresses per interval (%.2f per Eip),"
        + " %.1f EC2 calls per interval in all%n", EIPS, EipWorld.RESYNC.toSeconds(), describes / (double) INTERVALS,
        describes / (double) INTERVALS / EIPS, all / (double) INTERVALS);
    assertThat(world.count("AllocateAddress")).isEqualTo(EIPS);
  }
}
