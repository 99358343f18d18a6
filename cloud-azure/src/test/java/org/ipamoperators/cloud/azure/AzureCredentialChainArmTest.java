package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.core.http.HttpClient;
import com.azure.identity.CredentialUnavailableException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.testsupport.arm.ArmServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * The credential chain of {@link AzureClients#credential(AzureSettings, AzureClients.IdentityEnvironment)}
 * with the real service-principal and workload-identity credentials (MSAL) against the ARM server's
 * token endpoint, which issues tokens of a distinct kind per credential, so the ARM requests show
 * which link acted. The managed identity's endpoint (instance metadata) is not on loopback: a
 * credential reading the ARM server's metadata-shaped endpoint stands in for it.
 */
class AzureCredentialChainArmTest {
  static final String SUB = "00000000-0000-0000-0000-00000000000c";
  static final ObjectMapper JSON = new ObjectMapper();
  private ArmServer arm;
  private HttpClient http;
  private java.net.http.HttpClient raw;
  private String vm;
  private int metadataCalls;
  @TempDir
  Path dir;

  @BeforeEach
  void start() {
    arm = new ArmServer(SUB, "eastus");
    String vnet = arm.vnet("rg", "vnet1", "198.51.100.0/24");
    String subnet = arm.subnet(vnet, "worker", "198.51.100.0/26");
    vm = arm.vm("rg", "n1", subnet, null, List.of());
    raw = java.net.http.HttpClient.newBuilder().sslContext(arm.clientSslContext()).build();
    http = AzureClients.jdkHttpClient(java.net.http.HttpClient.newBuilder().sslContext(arm.clientSslContext()));
  }

  @AfterEach
  void stop() {
    arm.close();
  }

  private AzureSettings settings(boolean secret) {
    AzureSettings s = AzureSettings.of(SUB, "rg").withEndpoint(arm.endpoint());
    return secret ? s.withClientSecret(new AzureSettings.ClientSecret("tenant-1", "old-operator-sp", "s3cret")) : s;
  }

  /** The VM's identity, from the ARM server's metadata-shaped endpoint; unavailable when {@code up} is false. */
  private Supplier<TokenCredential> managedIdentity(boolean up) {
    return () -> request -> Mono.fromCallable(() -> {
      metadataCalls++;
      if (!up) {
        throw new CredentialUnavailableException("no managed identity endpoint");
      }
      HttpResponse<String> r = raw.send(HttpRequest.newBuilder(URI.create(arm.endpoint()
          + "metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.core.windows.net/"))
          .header("Metadata", "true").build(), HttpResponse.BodyHandlers.ofString());
      return new AccessToken(JSON.readTree(r.body()).path("access_token").asText(), OffsetDateTime.now().plusHours(1));
    });
  }

  private AzureClients.IdentityEnvironment env(Map<String, String> env, boolean managedIdentityUp) {
    return new AzureClients.IdentityEnvironment(arm.authorityHost(), env, http, false, managedIdentity(managedIdentityUp));
  }

  private Map<String, String> workloadEnv() throws Exception {
    Path token = Files.writeString(dir.resolve("azure-identity-token"), "federated.service-account.jwt");
    return Map.of("AZURE_FEDERATED_TOKEN_FILE", token.toString(), "AZURE_CLIENT_ID", "workload-client",
        "AZURE_TENANT_ID", "tenant-1");
  }

  private void describe(AzureSettings s, AzureClients.IdentityEnvironment id) throws Exception {
    try (AzureNodeNetwork network = AzureNodeNetwork.create(s, AzureClients.credential(s, id), http,
        new SimpleMeterRegistry())) {
      network.describe(new NodeRef("n1", "azure://" + vm, Map.of(), List.of()));
    }
  }

  @Test
  void byDefaultTheOldOperatorsSecretIsUsedWhenItExistsEvenWithANodeIdentity() throws Exception {
    describe(settings(true), env(Map.of(), true));
    assertThat(arm.tokenKindsUsed()).isNotEmpty().containsOnly(ArmServer.CLIENT_SECRET);
    assertThat(metadataCalls).as("the node's identity is not asked").isZero();
    // with a federated token file too, the Secret still comes first
    describe(settings(true), env(workloadEnv(), true));
    assertThat(arm.tokenKindsUsed()).containsOnly(ArmServer.CLIENT_SECRET);
    assertThat(AzureClients.describeChain(settings(true), workloadEnv()))
        .isEqualTo("client-secret, then workload-identity, then managed-identity");
  }

  @Test
  void withoutTheSecretWorkloadIdentityThenManagedIdentityAct() throws Exception {
    describe(settings(false), env(workloadEnv(), true));
    assertThat(arm.tokenKindsUsed()).isNotEmpty().containsOnly(ArmServer.WORKLOAD_IDENTITY);
    int before = arm.tokenKindsUsed().size();
    describe(settings(false), env(Map.of(), true));
    assertThat(arm.tokenKindsUsed().subList(before, arm.tokenKindsUsed().size())).isNotEmpty()
        .containsOnly(ArmServer.MANAGED_IDENTITY);
  }

  @Test
  void theOrderIsConfigurableAndAnUnavailableLinkPassesToTheNext() throws Exception {
    AzureSettings miFirst = AzureContext.resolve(Map.of(), Map.of(AzureContext.SETTING_SUBSCRIPTION, SUB,
        AzureContext.SETTING_RESOURCE_GROUP, "rg", AzureContext.SETTING_ENDPOINT, arm.endpoint().toString(),
        AzureContext.SETTING_CREDENTIAL_ORDER, "managed-identity, client-secret"), Map.of("azure_tenant_id", "tenant-1",
        "azure_client_id", "old-operator-sp", "azure_client_secret", "s3cret"));
    assertThat(miFirst.credentialOrder()).containsExactly(CredentialKind.MANAGED_IDENTITY, CredentialKind.CLIENT_SECRET);
    describe(miFirst, env(Map.of(), true));
    assertThat(arm.tokenKindsUsed()).isNotEmpty().containsOnly(ArmServer.MANAGED_IDENTITY);
    int before = arm.tokenKindsUsed().size();
    describe(miFirst, env(Map.of(), false)); // no metadata endpoint: the Secret acts
    assertThat(arm.tokenKindsUsed().subList(before, arm.tokenKindsUsed().size())).isNotEmpty()
        .containsOnly(ArmServer.CLIENT_SECRET);
    assertThatThrownBy(() -> CredentialKind.parseOrder("client-secret, password"))
        .hasMessageContaining("password");
  }

  @Test
  void aForbiddenIdentityFailsNamedAndDoesNotFallThroughToAnother() throws Exception {
    arm.deny(ArmServer.CLIENT_SECRET);
    assertThatThrownBy(() -> describe(settings(true), env(Map.of(), true)))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> {
          assertThat(e.errorCode()).isEqualTo("AuthorizationFailed");
          assertThat(e.getMessage()).contains("GetVirtualMachine");
        });
    assertThat(arm.tokenKindsUsed()).isNotEmpty().containsOnly(ArmServer.CLIENT_SECRET);
    assertThat(metadataCalls).isZero();
  }
}
