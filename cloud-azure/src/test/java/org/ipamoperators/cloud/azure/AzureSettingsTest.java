package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

class AzureSettingsTest {

  @Test
  void secretsAreNeverPrinted() {
    AzureSettings s = AzureSettings.of("sub", "rg").withClientSecret(new AzureSettings.ClientSecret("tenant-x",
        "client-y", "very-secret-z"));
    assertThat(s.toString()).doesNotContain("tenant-x", "client-y", "very-secret-z").contains("<redacted>");
  }

  @Test
  void theResourceManagerEndpointIsReplacedInACopyOfTheCloudsEndpoints() {
    AzureSettings s = AzureSettings.of("sub", "rg").withEndpoint(URI.create("https://127.0.0.1:8443/"))
        .withCloud(AzureSettings.Cloud.AZURE_US_GOVERNMENT);
    var env = AzureClients.environment(s);
    assertThat(env.getResourceManagerEndpoint()).isEqualTo("https://127.0.0.1:8443/");
    assertThat(env.getManagementEndpoint()).contains("usgovcloudapi");
    assertThat(AzureClients.environment(AzureSettings.of("sub", "rg")).getResourceManagerEndpoint())
        .isEqualTo("https://management.azure.com/");
  }

  @Test
  void theSdkRunsOnTheJdkHttpClientWithoutNetty() {
    assertThat(AzureClients.jdkHttpClient().getClass().getName()).startsWith("com.azure.core.http.jdk.httpclient.");
    assertThatThrownBy(() -> Class.forName("com.azure.core.http.netty.NettyAsyncHttpClientBuilder"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void badSettingsAreClearErrors() {
    assertThatThrownBy(() -> AzureSettings.of(" ", "rg")).hasMessageContaining("subscription");
    assertThatThrownBy(() -> new AzureSettings.ClientSecret("t", "c", "")).hasMessageContaining("client secret");
  }
}
