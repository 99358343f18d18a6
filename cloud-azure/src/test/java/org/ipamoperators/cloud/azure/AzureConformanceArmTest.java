package org.ipamoperators.cloud.azure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import com.azure.resourcemanager.resources.fluentcore.utils.ResourceManagerUtils;
import org.ipamoperators.conformance.NodeNetworkContract;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.testsupport.arm.ArmServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * Azure passes the conformance kit against the ARM server (real SDK, real HTTPS), with the network
 * built by the provider from a context as the controller makes it: Infrastructure's resource groups,
 * the endpoint setting and the old Secret's subscription. The ARM server enforces the
 * ipConfigurations-per-NIC limit, set to 4 here (room for 3 addresses) so every node is also a small one.
 */
class AzureConformanceArmTest extends NodeNetworkContract {
  private ArmServer arm;
  private NodeNetwork network;
  private String subnet;
  private int n;
  private int foreign = 60;

  @BeforeAll
  static void fastPolls() {
    ResourceManagerUtils.InternalRuntimeContext.setDelayProvider(d -> Duration.ofMillis(5));
  }

  @BeforeEach
  void setUp() throws Exception {
    arm = new ArmServer(AzureNodeNetworkArmTest.SUB, "eastus").nicLimit(4);
    String vnet = arm.vnet("net-rg", "vnet1", "198.51.100.0/24");
    subnet = arm.subnet(vnet, "worker", "198.51.100.0/26");
    AzureNodeNetworkProvider provider = new AzureNodeNetworkProvider(s -> AzureNodeNetworkArmTest.network(arm,
        s.withIpConfigurationsPerNic(4).withRetries(4, Duration.ofMillis(20), Duration.ofMillis(200)),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    network = provider.create(new ProviderContext("Azure", Map.of(AzureContext.RESOURCE_GROUP, "cluster-rg",
        AzureContext.NETWORK_RESOURCE_GROUP, "net-rg"), Map.of(AzureContext.SETTING_ENDPOINT, arm.endpoint().toString()),
        Map.of(AzureNodeNetworkProvider.CREDENTIALS_SECRET, Map.of("azure_subscription_id",
            AzureNodeNetworkArmTest.SUB))));
  }

  @AfterEach
  void close() {
    network.close();
    arm.close();
  }

  @Override
  protected NodeNetwork network() {
    return network;
  }

  @Override
  protected NodeRef node(String name) {
    return new NodeRef(name, "azure://" + arm.vm("cluster-rg", "vm" + (n++), subnet, null, List.of()), Map.of(),
        List.of());
  }

  @Override
  protected NodeRef smallNode(String name) {
    return node(name); // the limit is per subscription here: every NIC is as small
  }

  @Override
  protected IpRange subnet() {
    return IpRange.parse("198.51.100.0/26");
  }

  @Override
  protected Ip foreignAddress(NodeRef node) {
    String ip = "198.51.100." + foreign--;
    arm.seedIpConfiguration(arm.primaryNicId(node.providerId().substring("azure://".length())), "other-tool-" + foreign,
        ip, subnet, null);
    return Ip.parse(ip);
  }

  @Override
  protected NodeRef missingNode() {
    return new NodeRef("contract-gone", "azure:///subscriptions/" + AzureNodeNetworkArmTest.SUB
        + "/resourceGroups/cluster-rg/providers/Microsoft.Compute/virtualMachines/gone", Map.of(), List.of());
  }
}
