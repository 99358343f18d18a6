package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.okhttp.OkHttpClientFactory;
import io.fabric8.kubernetes.client.utils.HttpClientUtils;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * The command's class path carries one fabric8 transport, OkHttp (docs/benchmarks.md: it costs less CPU per write than
 * the JDK client). With a second one on the class path fabric8 would pick by priority, so a dependency that brings
 * another back must be excluded.
 */
class TransportTest {
  @Test
  void fabric8RunsOnOkHttpAndFindsNoOtherTransport() {
    assertThat(ServiceLoader.load(HttpClient.Factory.class).stream().map(p -> p.type().getName()).toList())
        .containsExactly(OkHttpClientFactory.class.getName());
    assertThat(HttpClientUtils.getHttpClientFactory()).isInstanceOf(OkHttpClientFactory.class);
  }
}
