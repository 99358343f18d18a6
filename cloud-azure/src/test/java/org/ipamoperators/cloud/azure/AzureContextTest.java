package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AzureContextTest {
  static final Map<String, String> SECRET = Map.of("azure_subscription_id", "sub-secret", "azure_tenant_id", "t",
      "azure_client_id", "c", "azure_client_secret", "s", "azure_resourcegroup", "rg-secret");

  @Test
  void settingsWinThenInfrastructureThenTheOldSecret() {
    AzureSettings s = AzureContext.resolve(Map.of(AzureContext.RESOURCE_GROUP, "rg-infra",
        AzureContext.NETWORK_RESOURCE_GROUP, "net-infra", AzureContext.CLOUD_NAME, "AzureUSGovernmentCloud",
        AzureContext.SUBSCRIPTION, "sub-node"), Map.of(), SECRET);
    assertThat(s.subscriptionId()).isEqualTo("sub-secret");
    assertThat(s.resourceGroup()).isEqualTo("rg-infra");
    assertThat(s.vnetResourceGroup()).isEqualTo("net-infra");
    assertThat(s.cloud()).isEqualTo(AzureSettings.Cloud.AZURE_US_GOVERNMENT);
    assertThat(s.clientSecret()).isNotNull();

    s = AzureContext.resolve(Map.of(AzureContext.SUBSCRIPTION, "sub-node"), Map.of(AzureContext.SETTING_RESOURCE_GROUP,
        "rg-set", AzureContext.SETTING_ENDPOINT, "https://127.0.0.1:1/"), Map.of());
    assertThat(s.subscriptionId()).isEqualTo("sub-node");
    assertThat(s.resourceGroup()).isEqualTo("rg-set");
    assertThat(s.vnetResourceGroup()).isEqualTo("rg-set");
    assertThat(s.endpoint()).hasToString("https://127.0.0.1:1/");
    assertThat(s.clientSecret()).as("no Secret: workload or managed identity").isNull();
  }

  @Test
  void aNodesProviderIdGivesTheSubscriptionAndTheGroupWhenNothingElseDoes() {
    String pid = "azure:///subscriptions/sub-pid/resourceGroups/rg-pid/providers/Microsoft.Compute/virtualMachines/w1";
    AzureSettings s = AzureContext.resolve(Map.of(AzureContext.NODE_PROVIDER_ID, pid), Map.of(), Map.of());
    assertThat(s.subscriptionId()).isEqualTo("sub-pid");
    assertThat(s.resourceGroup()).isEqualTo("rg-pid");
    s = AzureContext.resolve(Map.of(AzureContext.NODE_PROVIDER_ID, pid, AzureContext.RESOURCE_GROUP, "rg-infra"),
        Map.of(), Map.of("azure_subscription_id", "sub-secret"));
    assertThat(s.subscriptionId()).isEqualTo("sub-secret");
    assertThat(s.resourceGroup()).isEqualTo("rg-infra");
  }

  @Test
  void whatIsMissingIsSaid() {
    assertThatThrownBy(() -> AzureContext.resolve(Map.of(), Map.of(), Map.of()))
        .hasMessageContaining("IPAM_AZURE_SUBSCRIPTION_ID");
    assertThatThrownBy(() -> AzureContext.resolve(Map.of(AzureContext.SUBSCRIPTION, "s"), Map.of(), Map.of()))
        .hasMessageContaining("resourceGroupName");
    assertThatThrownBy(() -> AzureContext.resolve(Map.of(AzureContext.SUBSCRIPTION, "s",
        AzureContext.RESOURCE_GROUP, "rg"), Map.of(), Map.of("azure_client_id", "c")))
        .hasMessageContaining("together").hasMessageNotContaining("c\"");
  }
}
