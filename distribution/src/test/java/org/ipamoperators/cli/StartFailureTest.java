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

  private static StartFailure broken(Throwable io) {
    return new StartFailure(1, "cannot list x", new KubernetesClientException("x", io));
  }

  @Test
  void aConnectionThatBrokeMidAnswerIsWorthAnotherTry() {
    assertThat(StartFailure.isTransient(broken(new java.io.EOFException("EOF reached while reading")))).isTrue();
    assertThat(StartFailure.isTransient(broken(new java.net.SocketException("Connection reset")))).isTrue();
    assertThat(StartFailure.isTransient(broken(new java.io.IOException("HTTP/1.1 header parser received no bytes"))))
        .isTrue();
  }

  @Test
  void aWrongAddressFailsAtOnce() {
    assertThat(StartFailure.isTransient(broken(new java.net.ConnectException("Connection refused")))).isFalse();
    assertThat(StartFailure.isTransient(broken(new java.net.UnknownHostException("nowhere.invalid")))).isFalse();
    assertThat(StartFailure.isTransient(broken(new javax.net.ssl.SSLHandshakeException("bad certificate")))).isFalse();
    assertThat(StartFailure.isTransient(broken(new java.net.http.HttpConnectTimeoutException("timed out"))))
        .isFalse();
  }

  @Test
  void aRefusedConnectionReadsTheSameWhicheverClientPhrasedIt() {
    assertThat(StartFailure.describe(broken(new java.net.ConnectException("Connection refused"))))
        .isEqualTo("connection refused");
    assertThat(StartFailure.describe(broken(new java.net.ConnectException()))).isEqualTo("connection refused");
    assertThat(StartFailure.describe(broken(new java.net.ConnectException("Network is unreachable"))))
        .isEqualTo("Network is unreachable");
  }
}
