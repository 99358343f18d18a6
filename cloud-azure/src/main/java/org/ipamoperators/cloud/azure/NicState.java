package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import java.util.List;
import org.ipamoperators.core.address.IpRange;

/** What {@link AzureNodeNetwork#describe} found of a node, updated after each PUT of its NIC. */
final class NicState {
  final String node;
  final String vmId;
  final AzureIds.Id nic;
  final String subnetId;
  final List<IpRange> blocks;
  volatile NetworkInterfaceInner body;
  /** A Uniform scale set's instance: its NIC is read-only (the set's model decides it). */
  volatile boolean uniformScaleSet;

  NicState(String node, String vmId, AzureIds.Id nic, String subnetId, List<IpRange> blocks, NetworkInterfaceInner body) {
    this.node = node;
    this.vmId = vmId;
    this.nic = nic;
    this.subnetId = subnetId;
    this.blocks = blocks;
    this.body = body;
  }

  String where() {
    return "NIC " + nic.name() + " of node " + node + " (VM " + AzureIds.last(vmId) + ")";
  }
}
