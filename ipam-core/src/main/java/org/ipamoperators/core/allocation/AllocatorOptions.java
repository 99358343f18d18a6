package org.ipamoperators.core.allocation;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Allocator settings. {@code cooldown}: a released address is not handed out again for this long
 * while any other address is free (so a client that still holds a stale address does not collide
 * with a new owner at once); zero turns it off. {@code seed} makes RANDOM repeatable.
 */
public record AllocatorOptions(AllocationStrategy strategy, long seed, Duration cooldown, Clock clock) {

  /**
   * Checks the settings.
   *
   * @param strategy how addresses are chosen
   * @param seed the seed of RANDOM
   * @param cooldown how long a released address rests; zero for none
   * @param clock the time the cooldown is measured with
   */
  public AllocatorOptions {
    Objects.requireNonNull(strategy, "strategy");
    Objects.requireNonNull(cooldown, "cooldown");
    Objects.requireNonNull(clock, "clock");
    if (cooldown.isNegative()) {
      throw new IllegalArgumentException("cooldown must not be negative: " + cooldown);
    }
  }

  /**
   * A strategy with a fixed seed, no cooldown and the system clock.
   *
   * @param strategy how addresses are chosen
   * @return the options
   */
  public static AllocatorOptions of(AllocationStrategy strategy) {
    return new AllocatorOptions(strategy, 0x5eed, Duration.ZERO, Clock.systemUTC());
  }

  /**
   * The same options with another seed.
   *
   * @param newSeed the seed of RANDOM
   * @return new options
   */
  public AllocatorOptions withSeed(long newSeed) {
    return new AllocatorOptions(strategy, newSeed, cooldown, clock);
  }

  /**
   * The same options with a cooldown.
   *
   * @param newCooldown how long a released address rests
   * @param newClock the clock it is measured with
   * @return new options
   */
  public AllocatorOptions withCooldown(Duration newCooldown, Clock newClock) {
    return new AllocatorOptions(strategy, seed, newCooldown, newClock);
  }
}
