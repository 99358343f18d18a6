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

  public AllocatorOptions {
    Objects.requireNonNull(strategy, "strategy");
    Objects.requireNonNull(cooldown, "cooldown");
    Objects.requireNonNull(clock, "clock");
    if (cooldown.isNegative()) {
      throw new IllegalArgumentException("cooldown must not be negative: " + cooldown);
    }
  }

  public static AllocatorOptions of(AllocationStrategy strategy) {
    return new AllocatorOptions(strategy, 0x5eed, Duration.ZERO, Clock.systemUTC());
  }

  public AllocatorOptions withSeed(long newSeed) {
    return new AllocatorOptions(strategy, newSeed, cooldown, clock);
  }

  public AllocatorOptions withCooldown(Duration newCooldown, Clock newClock) {
    return new AllocatorOptions(strategy, seed, newCooldown, newClock);
  }
}
