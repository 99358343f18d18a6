package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubeapitest.KubeAPITestException;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class StartupRetryTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(120);

  @Test
  void aReadinessFailureSoonerThanTheTimeoutIsTheMidnightWrapAndIsRetried() {
    var failure = new KubeAPITestException("Kube API Server did not start properly");
    assertThat(StartupRetry.gaveUpEarly(failure, Duration.ofMillis(300), TIMEOUT)).isTrue();
    assertThat(StartupRetry.gaveUpEarly(new RuntimeException("wrapped", failure), Duration.ofSeconds(5), TIMEOUT))
        .isTrue();
  }

  @Test
  void aRealTimeoutIsNotRetried() {
    var failure = new KubeAPITestException("etcd did not start properly");
    assertThat(StartupRetry.gaveUpEarly(failure, TIMEOUT, TIMEOUT)).isFalse();
    assertThat(StartupRetry.gaveUpEarly(failure, Duration.ofSeconds(130), TIMEOUT)).isFalse();
  }

  @Test
  void otherFailuresAreNotRetried() {
    var failure = new KubeAPITestException(new IOException("No such file: kube-apiserver"));
    assertThat(StartupRetry.gaveUpEarly(failure, Duration.ofMillis(10), TIMEOUT)).isFalse();
    assertThat(StartupRetry.gaveUpEarly(new IllegalStateException((String) null), Duration.ZERO, TIMEOUT)).isFalse();
  }
}
