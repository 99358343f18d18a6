package org.ipamoperators.testsupport.arm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The ARM server's rules, spoken to in raw HTTPS as the SDK would (reference: azure-arm.md §1 and §6). */
class ArmServerTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String SUB = "sub-1";
  private ArmServer arm;
  private HttpClient http;
  private String subnet;
  private String nicPath;
  private String vnetPath;

  @BeforeEach
  void start() {
    arm = new ArmServer(SUB, "eastus");
    String vnet = arm.vnet("rg", "vnet1", "198.51.100.0/24");
    subnet = arm.subnet(vnet, "worker", "198.51.100.0/28");
    arm.vm("rg", "vm1", subnet, null, List.of());
    arm.vm("rg", "vm2", subnet, null, List.of());
    http = HttpClient.newBuilder().sslContext(arm.clientSslContext()).build();
    nicPath = "/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/vm1-nic";
    vnetPath = vnet;
  }

  @AfterEach
  void stop() {
    arm.close();
  }

  private HttpResponse<String> send(String method, String pathAndQuery, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(arm.endpoint() + pathAndQuery.substring(1)))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .header("Authorization", "Bearer t").header("Content-Type", "application/json");
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> getNic() throws Exception {
    return send("GET", nicPath + "?api-version=2025-03-01", null);
  }

  private static String code(HttpResponse<String> r) throws Exception {
    return JSON.readTree(r.body()).path("error").path("code").asText();
  }

  /** The NIC as GOT, with read-only fields left in (the server ignores them), and one config added. */
  private ObjectNode withSecondary(String name, String ip) throws Exception {
    ObjectNode nic = (ObjectNode) JSON.readTree(getNic().body());
    ObjectNode c = ((ArrayNode) nic.path("properties").path("ipConfigurations")).addObject().put("name", name);
    c.putObject("properties").put("privateIPAddress", ip).put("privateIPAllocationMethod", "Static")
        .putObject("subnet").put("id", subnet.toUpperCase());
    return nic;
  }

  @Test
  void authAndApiVersionAreChecked() throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(arm.endpoint() + nicPath.substring(1)
        + "?api-version=2025-03-01")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(code(send("GET", nicPath + "?api-version=2024-05-01", null))).isEqualTo("InvalidApiVersionParameter");
    assertThat(code(send("GET", nicPath, null))).isEqualTo("MissingApiVersionParameter");
    assertThat(send("GET", "/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"
        + "?api-version=2025-03-01", null).statusCode()).isEqualTo(400);
    assertThat(code(send("GET", nicPath.replace("vm1-nic", "nope") + "?api-version=2025-03-01", null)))
        .isEqualTo("ResourceNotFound");
  }

  @Test
  void aNicGetHasEtagsIdsAndTheSubnetListsItsHoldersUpperCased() throws Exception {
    HttpResponse<String> r = getNic();
    JsonNode nic = JSON.readTree(r.body());
    assertThat(r.headers().firstValue("ETag")).contains(nic.path("etag").asText());
    assertThat(nic.path("etag").asText()).startsWith("W/\"");
    JsonNode cfg = nic.path("properties").path("ipConfigurations").get(0);
    assertThat(cfg.path("etag").asText()).isEqualTo(nic.path("etag").asText());
    assertThat(cfg.path("properties").path("privateIPAddress").asText()).isEqualTo("198.51.100.4");
    assertThat(r.headers().firstValue("x-ms-request-id")).isPresent();
    JsonNode expanded = JSON.readTree(send("GET", vnetPath + "?api-version=2025-03-01&$expand=subnets/ipConfigurations",
        null).body());
    JsonNode refs = expanded.path("properties").path("subnets").get(0).path("properties").path("ipConfigurations");
    assertThat(refs).hasSize(2);
    assertThat(refs.get(0).path("id").asText()).isEqualTo(refs.get(0).path("id").asText().toUpperCase());
    assertThat(refs.get(0).path("properties").path("privateIPAddress").asText()).isEqualTo("198.51.100.4");
    JsonNode plain = JSON.readTree(send("GET", vnetPath + "?api-version=2025-03-01", null).body());
    assertThat(plain.path("properties").path("subnets").get(0).path("properties").path("ipConfigurations").get(0)
        .has("properties")).isFalse();
  }

  @Test
  void aPutIsALongRunningFullReplacementWithAzuresRules() throws Exception {
    ObjectNode body = withSecondary("s1", "198.51.100.9");
    HttpResponse<String> r = send("PUT", nicPath + "?api-version=2025-03-01", body.toString());
    assertThat(r.statusCode()).isEqualTo(200);
    String op = r.headers().firstValue("Azure-AsyncOperation").orElseThrow();
    assertThat(op).startsWith(arm.endpoint() + "subscriptions/" + SUB + "/providers/Microsoft.Network/locations/eastus/"
        + "operations/");
    assertThat(r.headers().firstValue("Retry-After")).contains("1");
    assertThat(JSON.readTree(r.body()).path("properties").path("provisioningState").asText()).isEqualTo("Updating");
    // a second write while the operation runs
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", body.toString())))
        .isEqualTo("AnotherOperationInProgress");
    JsonNode status = JSON.readTree(send("GET", URI.create(op).getRawPath() + "?" + URI.create(op).getRawQuery(), null)
        .body());
    assertThat(status.path("status").asText()).isEqualTo("Succeeded");
    assertThat(arm.secondaryAddresses(nicPath)).containsEntry("s1", "198.51.100.9");
    assertThat(arm.nicProvisioningState(nicPath)).isEqualTo("Succeeded");

    // stale If-Match
    String etag = JSON.readTree(getNic().body()).path("etag").asText();
    arm.seedIpConfiguration(nicPath, "other", "198.51.100.10", subnet, null);
    r = send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("s2", "198.51.100.11").toString(), "If-Match", etag);
    assertThat(r.statusCode()).isEqualTo(412);

    arm.putMode(ArmServer.PutMode.SUCCEEDED);
    // leaving a config out removes it
    ObjectNode nic = (ObjectNode) JSON.readTree(getNic().body());
    ArrayNode cfgs = (ArrayNode) nic.path("properties").path("ipConfigurations");
    cfgs.remove(2);
    r = send("PUT", nicPath + "?api-version=2025-03-01", nic.toString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(arm.secondaryAddresses(nicPath)).containsOnlyKeys("s1");
    // the primary cannot go
    nic = (ObjectNode) JSON.readTree(getNic().body());
    ((ArrayNode) nic.path("properties").path("ipConfigurations")).remove(0);
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", nic.toString()))).isEqualTo("IpConfigDeleteNotSupported");
    nic = (ObjectNode) JSON.readTree(getNic().body());
    ((ObjectNode) nic.path("properties").path("ipConfigurations").get(0).path("properties")).put("primary", false);
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", nic.toString())))
        .isEqualTo("IpConfigDeleteNotSupported");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("x", "198.51.100.40").toString())))
        .isEqualTo("PrivateIPAddressNotInSubnet");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("x", "198.51.100.15").toString())))
        .isEqualTo("PrivateIPAddressInReservedRange");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("x", "198.51.100.3").toString())))
        .isEqualTo("PrivateIPAddressInReservedRange");
    r = send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("x", "198.51.100.5").toString());
    assertThat(code(r)).isEqualTo("PrivateIPAddressIsAllocated");
    assertThat(JSON.readTree(r.body()).path("error").path("message").asText()).contains("vm2-nic/ipConfigurations/ipconfig1");
    ObjectNode bad = withSecondary("x", "198.51.100.12");
    ((ObjectNode) bad.path("properties").path("ipConfigurations").get(2).path("properties")).putObject("subnet")
        .put("id", subnet + "-gone");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", bad.toString()))).isEqualTo("InvalidResourceReference");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", "{not json"))).isEqualTo("InvalidRequestFormat");
    arm.nicLimit(2);
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("x", "198.51.100.12").toString())))
        .isEqualTo(ArmServer.NIC_LIMIT_CODE);
    assertThat(arm.count(ArmServer.Request::isNicPut)).isEqualTo(13);
  }

  @Test
  void conditionalHeadersHoldOnThePutAndAreEvaluatedOnGetsAndPolls() throws Exception {
    String etag = JSON.readTree(getNic().body()).path("etag").asText();
    HttpResponse<String> r = send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("s1", "198.51.100.9")
        .toString(), "If-Match", etag);
    assertThat(r.statusCode()).isEqualTo(200);
    URI op = URI.create(r.headers().firstValue("Azure-AsyncOperation").orElseThrow());
    String poll = op.getRawPath() + "?" + op.getRawQuery();
    // the operation resource has no etag: If-Match can never hold on it
    HttpResponse<String> p = send("GET", poll, null, "If-Match", etag);
    assertThat(p.statusCode()).isEqualTo(412);
    assertThat(code(p)).isEqualTo("PreconditionFailed");
    assertThat(send("GET", poll, null, "If-None-Match", "*").statusCode()).isEqualTo(412);
    assertThat(send("GET", poll, null).statusCode()).isEqualTo(200);
    // the PUT made the etag stale: a GET with it fails, with the current one it passes
    assertThat(send("GET", nicPath + "?api-version=2025-03-01", null, "If-Match", etag).statusCode()).isEqualTo(412);
    String now = JSON.readTree(getNic().body()).path("etag").asText();
    assertThat(now).isNotEqualTo(etag);
    assertThat(send("GET", nicPath + "?api-version=2025-03-01", null, "If-Match", now).statusCode()).isEqualTo(200);
    assertThat(send("GET", nicPath + "?api-version=2025-03-01", null, "If-None-Match", now).statusCode()).isEqualTo(304);
    // recorded per request
    List<ArmServer.Request> all = arm.requests();
    assertThat(all).filteredOn(ArmServer.Request::isNicPut).singleElement()
        .satisfies(x -> assertThat(x.conditions()).containsExactly(java.util.Map.entry("if-match", etag)));
    assertThat(all).filteredOn(ArmServer.Request::isOperationPoll).extracting(ArmServer.Request::status)
        .containsExactly(412, 412, 200);
    assertThat(all.get(0).conditions()).isEmpty();
    arm.conditionalReads(false);
    assertThat(send("GET", poll, null, "If-Match", etag).statusCode()).isEqualTo(200);
  }

  @Test
  void aPutReplacesTheNicsOwnSettingsWithWhatItsBodyCarries() throws Exception {
    String nsg = arm.networkSecurityGroup("rg", "nsg1");
    arm.nicSettings(nicPath, nsg, List.of("192.0.2.53"), true, true, java.util.Map.of("team", "net"));
    arm.putMode(ArmServer.PutMode.SUCCEEDED);
    JsonNode nic = JSON.readTree(getNic().body());
    assertThat(nic.path("properties").path("networkSecurityGroup").path("id").asText()).isEqualTo(nsg);
    assertThat(nic.path("properties").path("dnsSettings").path("dnsServers").get(0).asText()).isEqualTo("192.0.2.53");
    assertThat(nic.path("properties").path("enableAcceleratedNetworking").asBoolean()).isTrue();
    assertThat(nic.path("properties").path("enableIPForwarding").asBoolean()).isTrue();
    assertThat(nic.path("tags").path("team").asText()).isEqualTo("net");
    // sent back as read: kept
    assertThat(send("PUT", nicPath + "?api-version=2025-03-01", nic.toString()).statusCode()).isEqualTo(200);
    assertThat(arm.nic(nicPath).path("properties").path("networkSecurityGroup").path("id").asText()).isEqualTo(nsg);
    // left out: reset, as a full-body PUT does on Azure
    ObjectNode bare = (ObjectNode) JSON.readTree(getNic().body());
    ObjectNode props = (ObjectNode) bare.get("properties");
    props.remove(List.of("networkSecurityGroup", "dnsSettings", "enableAcceleratedNetworking", "enableIPForwarding"));
    bare.remove("tags");
    assertThat(send("PUT", nicPath + "?api-version=2025-03-01", bare.toString()).statusCode()).isEqualTo(200);
    JsonNode after = arm.nic(nicPath);
    assertThat(after.path("properties").has("networkSecurityGroup")).isFalse();
    assertThat(after.path("properties").path("dnsSettings").path("dnsServers")).isEmpty();
    assertThat(after.path("properties").path("enableAcceleratedNetworking").asBoolean()).isFalse();
    assertThat(after.path("tags")).isEmpty();
    // an NSG that does not exist
    props.putObject("networkSecurityGroup").put("id", nsg + "-gone");
    assertThat(code(send("PUT", nicPath + "?api-version=2025-03-01", bare.toString()))).isEqualTo("InvalidResourceReference");
  }

  @Test
  void listsPageWithAbsoluteNextLinksAndWritesAreThrottled() throws Exception {
    arm.pageSize(1);
    JsonNode page = JSON.readTree(send("GET", "/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Compute/"
        + "virtualMachines?api-version=2025-04-01", null).body());
    assertThat(page.path("value")).hasSize(1);
    URI next = URI.create(page.path("nextLink").asText());
    assertThat(next.toString()).startsWith(arm.endpoint().toString()).contains("api-version=2025-04-01");
    JsonNode second = JSON.readTree(send("GET", next.getRawPath() + "?" + next.getRawQuery(), null).body());
    assertThat(second.path("value").get(0).path("name").asText()).isEqualTo("vm2");
    assertThat(second.has("nextLink")).isFalse();
    assertThat(second.path("value").get(0).path("properties").path("networkProfile").path("networkInterfaces"))
        .hasSize(1);

    arm.throttle(100, 10, 1, 0.01);
    arm.putMode(ArmServer.PutMode.SUCCEEDED);
    assertThat(send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("a", "198.51.100.9").toString())
        .statusCode()).isEqualTo(200);
    HttpResponse<String> r = send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("b", "198.51.100.10").toString());
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(code(r)).isEqualTo("SubscriptionRequestsThrottled");
    assertThat(Integer.parseInt(r.headers().firstValue("Retry-After").orElseThrow())).isPositive();

    arm.throttle(100, 10, 100, 10);
    arm.inject(ArmServer.Fault.of("PUT", "vm1-nic$", 429, "RetryableError", 1).detail("ReferencedResourceNotProvisioned"));
    r = send("PUT", nicPath + "?api-version=2025-03-01", withSecondary("b", "198.51.100.10").toString());
    assertThat(JSON.readTree(r.body()).path("error").path("details").get(0).path("code").asText())
        .isEqualTo("ReferencedResourceNotProvisioned");
    assertThat(arm.allFaultsUsed()).isTrue();
  }
}
