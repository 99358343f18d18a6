package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.testsupport.MutableClock;
import org.junit.jupiter.api.Test;

/** API discovery for PodMonitors runs once per version of their CRD and per refresh, not on every reconcile. */
class PodMonitorApiTest {
  private static final Duration REFRESH = Duration.ofMinutes(5);
  private final AtomicInteger asked = new AtomicInteger();
  private final AtomicBoolean served = new AtomicBoolean();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final PodMonitorApi api = new PodMonitorApi(() -> {
    asked.incrementAndGet();
    return served.get();
  }, REFRESH, clock);

  private static Optional<CustomResourceDefinition> crd(String resourceVersion) {
    return Optional.of(new CustomResourceDefinitionBuilder().withNewMetadata().withName(PodMonitorApi.CRD)
        .withUid("u1").withResourceVersion(resourceVersion).endMetadata().build());
  }

  @Test
  void anUnchangedCrdIsAskedAboutOncePerRefresh() {
    served.set(true);
    for (int i = 0; i < 5; i++) {
      assertThat(api.served(crd("7"))).isTrue();
    }
    assertThat(asked).hasValue(1);
    clock.advance(REFRESH);
    assertThat(api.served(crd("7"))).isTrue();
    assertThat(asked).hasValue(2);
  }

  @Test
  void noCrdIsAskedAboutOncePerRefresh() {
    for (int i = 0; i < 5; i++) {
      assertThat(api.served(Optional.empty())).isFalse();
    }
    assertThat(asked).hasValue(1);
  }

  @Test
  void aCrdAppearingChangingOrGoingIsAskedAboutAtOnce() {
    assertThat(api.served(Optional.empty())).isFalse();
    served.set(true);
    assertThat(api.served(crd("7"))).isTrue();
    assertThat(api.served(crd("8"))).isTrue();
    assertThat(asked).hasValue(3);
    served.set(false);
    assertThat(api.served(Optional.empty())).isFalse();
    assertThat(asked).hasValue(4);
  }

  @Test
  void aCrdNotServedYetOrServedThoughGoneIsAskedAboutAgainUntilTheyAgree() {
    assertThat(api.served(crd("7"))).isFalse(); // created, not established yet
    assertThat(api.served(crd("7"))).isFalse();
    assertThat(asked).hasValue(2);
    served.set(true);
    assertThat(api.served(crd("7"))).isTrue();
    assertThat(api.served(crd("7"))).isTrue();
    assertThat(asked).hasValue(3);
    assertThat(api.served(Optional.empty())).isTrue(); // deleted, discovery not updated yet
    served.set(false);
    assertThat(api.served(Optional.empty())).isFalse();
    assertThat(api.served(Optional.empty())).isFalse();
    assertThat(asked).hasValue(5);
  }

  @Test
  void aCrdBeingDeletedIsNotServedWhateverDiscoverySays() {
    served.set(true);
    assertThat(api.served(crd("7"))).isTrue();
    CustomResourceDefinition terminating = crd("8").orElseThrow();
    terminating.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
    assertThat(api.served(Optional.of(terminating))).isFalse();
    assertThat(asked).hasValue(1);
    served.set(false);
    assertThat(api.served(Optional.empty())).isFalse();
    assertThat(asked).hasValue(2);
  }
}
