package org.ipamoperators.controller.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryBackoffTest {
  @Test
  void doublesUpToTheMaximumPerKeyAndStartsAgainAfterAReset() {
    RetryBackoff b = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(2));
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(4));
    assertThat(b.next("b")).as("another key counts on its own").isEqualTo(Duration.ofSeconds(2));
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(8));
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(16));
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(30));
    for (int i = 0; i < 100; i++) {
      assertThat(b.next("a")).as("never gives up, never overflows").isEqualTo(Duration.ofSeconds(30));
    }
    b.reset("a");
    assertThat(b.next("a")).isEqualTo(Duration.ofSeconds(2));
  }
}
