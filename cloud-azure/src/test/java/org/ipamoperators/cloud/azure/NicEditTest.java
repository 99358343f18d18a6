package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.json.JsonProviders;
import com.azure.json.JsonReader;
import com.azure.json.JsonWriter;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringWriter;
import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/** The request/response mapping, against the shapes recorded in the reference (NIC GET, NIC PUT, errors). */
class NicEditTest {
  static final String P = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Network";
  /** A NIC GET as Azure answers it (reference §1.3), with a second, foreign ipConfiguration. */
  static final String NIC_GET = """
      { "name": "nic1", "id": "%1$s/networkInterfaces/nic1", "etag": "W/\\"e1\\"",
        "type": "Microsoft.Network/networkInterfaces", "location": "eastus",
        "properties": { "provisioningState": "Succeeded", "resourceGuid": "g", "macAddress": "00-0D-3A-00-00-01",
          "primary": true, "enableIPForwarding": false, "enableAcceleratedNetworking": false,
          "virtualMachine": { "id": "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/vm1" },
          "dnsSettings": { "dnsServers": [], "appliedDnsServers": [] },
          "ipConfigurations": [
            { "name": "ipconfig1", "id": "%1$s/networkInterfaces/nic1/ipConfigurations/ipconfig1", "etag": "W/\\"e1\\"",
              "type": "Microsoft.Network/networkInterfaces/ipConfigurations",
              "properties": { "provisioningState": "Succeeded", "primary": true, "privateIPAddress": "10.0.1.4",
                "privateIPAllocationMethod": "Dynamic", "privateIPAddressVersion": "IPv4",
                "subnet": { "id": "%1$s/virtualNetworks/vnet1/subnets/worker" },
                "loadBalancerBackendAddressPools": [ { "id": "%1$s/loadBalancers/lb1/backendAddressPools/pool1" } ] } },
            { "name": "cni1", "id": "%1$s/networkInterfaces/nic1/ipConfigurations/cni1", "etag": "W/\\"e1\\"",
              "properties": { "provisioningState": "Succeeded", "primary": false, "privateIPAddress": "10.0.1.9",
                "privateIPAllocationMethod": "Static", "privateIPAddressVersion": "IPv4",
                "subnet": { "id": "%1$s/virtualNetworks/vnet1/subnets/worker" },
                "applicationSecurityGroups": [ { "id": "%1$s/applicationSecurityGroups/asg1" } ] } } ] } }
      """.formatted(P);

  static NetworkInterfaceInner read(String json) throws Exception {
    try (JsonReader r = JsonProviders.createReader(json)) {
      return NetworkInterfaceInner.fromJson(r);
    }
  }

  static JsonNode written(NetworkInterfaceInner nic) throws Exception {
    StringWriter out = new StringWriter();
    try (JsonWriter w = JsonProviders.createWriter(out)) {
      nic.toJson(w);
    }
    return new ObjectMapper().readTree(out.toString());
  }

  @Test
  void thePutBodyHasEveryConfigurationTheNewOneBareAndNoReadOnlyField() throws Exception {
    NetworkInterfaceInner nic = read(NIC_GET);
    var primary = nic.ipConfigurations().get(0);
    List<String> pools = NicEdit.wantedPools(primary, LoadBalancerPolicy.SAME_AS_PRIMARY, Set.of());
    NicEdit.Plan plan = NicEdit.plan(nic.ipConfigurations(), Set.of(), Set.of(Ip.parse("10.0.1.50")),
        primary.subnet().id(), pools, true);
    assertThat(plan.changed()).isTrue();
    JsonNode body = written(nic.withIpConfigurations(plan.configs()));
    JsonNode cfgs = body.path("properties").path("ipConfigurations");
    assertThat(cfgs).hasSize(3);
    JsonNode added = cfgs.get(2);
    assertThat(added.path("name").asText()).isEqualTo("ipam-egress-10.0.1.50");
    assertThat(added.has("id")).isFalse();
    assertThat(added.has("etag")).isFalse();
    JsonNode props = added.path("properties");
    assertThat(props.path("privateIPAddress").asText()).isEqualTo("10.0.1.50");
    assertThat(props.path("privateIPAllocationMethod").asText()).isEqualTo("Static");
    assertThat(props.path("primary").asBoolean(true)).isFalse();
    assertThat(props.path("subnet").path("id").asText()).endsWith("/subnets/worker");
    assertThat(props.path("loadBalancerBackendAddressPools").get(0).path("id").asText()).endsWith("/pool1");
    // the primary and the foreign configuration go back with their ids and properties, read-only fields stripped
    assertThat(cfgs.get(0).path("properties").path("primary").asBoolean()).isTrue();
    assertThat(cfgs.get(0).path("properties").path("privateIPAllocationMethod").asText()).isEqualTo("Dynamic");
    assertThat(cfgs.get(1).path("properties").path("applicationSecurityGroups").get(0).path("id").asText())
        .endsWith("/asg1");
    for (JsonNode c : cfgs) {
      assertThat(c.path("properties").has("provisioningState")).isFalse();
      assertThat(c.has("etag")).isFalse();
    }
    assertThat(body.path("properties").has("provisioningState")).isFalse();
    assertThat(body.path("properties").has("macAddress")).isFalse();
    assertThat(body.path("properties").has("resourceGuid")).isFalse();
    assertThat(body.has("etag")).isFalse();
  }

  @Test
  void nothingToChangeIsNoPlanAndOnlyOwnedConfigurationsAreRemoved() throws Exception {
    NetworkInterfaceInner nic = read(NIC_GET);
    assertThat(NicEdit.plan(nic.ipConfigurations(), Set.of(Ip.parse("10.0.1.9"), Ip.parse("10.0.1.4")), Set.of(),
        null, List.of(), true).changed()).as("foreign and primary are never removed").isFalse();
    assertThat(NicEdit.owned(nic.ipConfigurations().get(1))).isFalse();
    assertThat(NicEdit.ownedName(Ip.parse("2001:db8::5"))).isEqualTo("ipam-egress-2001-db8--5");
    assertThat(NicEdit.ownedName("EgressIP10.0.1.7", Ip.parse("10.0.1.7"))).isTrue();
    assertThat(NicEdit.ownedName("EgressIP10.0.1.7", Ip.parse("10.0.1.8"))).isFalse();
    assertThat(NicEdit.wantedPools(nic.ipConfigurations().get(0), LoadBalancerPolicy.NONE, Set.of())).isEmpty();
    assertThat(NicEdit.wantedPools(nic.ipConfigurations().get(0), LoadBalancerPolicy.SAME_AS_PRIMARY,
        Set.of((P + "/loadBalancers/lb1/backendAddressPools/POOL1").toUpperCase()))).isEmpty();
  }

  @Test
  void poolsFollowThePolicyOnlyForTheAddressesOfThisCall() throws Exception {
    NetworkInterfaceInner nic = read(NIC_GET);
    var primary = nic.ipConfigurations().get(0);
    String subnet = primary.subnet().id();
    List<String> pools = NicEdit.wantedPools(primary, LoadBalancerPolicy.SAME_AS_PRIMARY, Set.of());
    var mine = NicEdit.egressConfig(Ip.parse("10.0.1.50"), subnet, pools);
    var another = NicEdit.egressConfig(Ip.parse("10.0.1.51"), subnet, List.of()); // another EgressIPAM's, policy none
    List<com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner> cfgs =
        new java.util.ArrayList<>(nic.ipConfigurations());
    cfgs.add(mine);
    cfgs.add(another);
    assertThat(NicEdit.plan(cfgs, Set.of(), Set.of(Ip.parse("10.0.1.50")), subnet, pools, true).changed()).isFalse();
    NicEdit.Plan none = NicEdit.plan(cfgs, Set.of(), Set.of(Ip.parse("10.0.1.50")), subnet, List.of(), true);
    assertThat(none.changed()).isTrue();
    assertThat(mine.loadBalancerBackendAddressPools()).isEmpty();
    assertThat(NicEdit.poolIds(another)).isEmpty();
    assertThat(NicEdit.plan(cfgs, Set.of(), Set.of(Ip.parse("10.0.1.51")), subnet, List.of(), true).changed()).isFalse();
  }

  @Test
  void theProviderIdNamesTheVm() {
    assertThat(AzureIds.vmOfProviderId("azure:///subscriptions/S/resourceGroups/rg-1/providers/Microsoft.Compute/"
        + "virtualMachines/worker-1")).hasValueSatisfying(id -> {
          assertThat(id.resourceGroup()).isEqualTo("rg-1");
          assertThat(id.name()).isEqualTo("worker-1");
        });
    assertThat(AzureIds.vmOfProviderId("aws:///us-east-1a/i-0abc")).isEmpty();
    assertThat(AzureIds.isScaleSet("azure:///subscriptions/S/resourceGroups/rg/providers/Microsoft.Compute/"
        + "virtualMachineScaleSets/ss/virtualMachines/3")).isTrue();
  }
}
