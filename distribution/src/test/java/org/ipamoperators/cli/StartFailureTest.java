package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

class StartFailureTest {
  private static StartFailure failure(int code) {
    return new StartFailure(1, "cannot list x", new KubernetesClientException("x", code, null));
  }

  @Test
  void throttlingAndServerErrorsAreWorthAnotherTryWrongInputIsNot() {
    assertThat(StartFailure.isTransient(failure(429))).isTrue();
    assertThat(StartFailure.isTransient(failure(500))).isTrue();
    assertThat(StartFailure.isTransient(failure(503))).isTrue();
    assertThat(StartFailure.isTransient(failure(404))).isFalse();
    assertThat(StartFailure.isTransient(failure(403))).isFalse();
    assertThat(StartFailure.isTransient(new StartFailure(2, "bad input"))).isFalse();
  }
}
