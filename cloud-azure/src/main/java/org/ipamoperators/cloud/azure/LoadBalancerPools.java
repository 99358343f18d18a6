package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.network.fluent.models.BackendAddressPoolInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load-balancer backend pools egress ipConfigurations join ({@link LoadBalancerPolicy}), less the pools found to
 * have an outbound rule, which Azure refuses for secondary ipConfigurations.
 */
final class LoadBalancerPools {
  private static final Logger LOG = LoggerFactory.getLogger(AzureNodeNetwork.class);

  private final ArmAccess arm;
  private final LoadBalancerPolicy policy;

  LoadBalancerPools(ArmAccess arm, LoadBalancerPolicy policy) {
    this.arm = arm;
    this.policy = policy;
  }

  /** The pools of the NIC's primary configuration that the egress configurations of the NIC join. */
  List<String> wanted(NetworkInterfaceInner nic) {
    return NicEdit.wantedPools(NicReads.primaryConfig(nic).orElse(null), policy, arm.state().outboundPools);
  }

  /**
   * After {@code OutboundRuleCannotBeUsed…}: the primary's pools that an outbound rule references,
   * read from the pools themselves. True when one was newly found (retry without it).
   */
  boolean learnOutboundPools(NicState s) {
    boolean found = false;
    NetworkInterfaceIpConfigurationInner primary = NicReads.primaryConfig(s.body).orElse(null);
    for (String poolId : NicEdit.wantedPools(primary, policy, arm.state().outboundPools)) {
      Optional<AzureIds.Id> lb = AzureIds.parse(poolId);
      if (lb.isEmpty()) {
        continue;
      }
      try {
        BackendAddressPoolInner p = arm.call("GetLoadBalancerBackendAddressPool", () -> arm.clients().network()
            .getLoadBalancerBackendAddressPools()
            .get(lb.get().resourceGroup(), lb.get().name(), AzureIds.last(poolId)));
        boolean outbound = p.outboundRule() != null || p.outboundRules() != null && !p.outboundRules().isEmpty();
        if (outbound && arm.state().outboundPools.add(poolId)) {
          found = true;
          LOG.warn("backend pool {} has an outbound rule: egress ipConfigurations stay out of it (no outbound "
              + "connectivity through it for them)", poolId);
        }
      } catch (ArmCallFailed f) {
        LOG.info("could not read backend pool {}: {}", poolId, f.describe());
      }
    }
    return found;
  }
}
