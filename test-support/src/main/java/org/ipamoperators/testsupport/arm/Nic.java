package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A network interface as the server holds it: its ipConfigurations as stored (name and properties,
 * without ids, etags or types), its own settings, etag, provisioning state and running operation.
 */
final class Nic {
  final String subscription;
  final String rg;
  final String name;
  final String guid = UUID.randomUUID().toString();
  String vmId;
  /** A Uniform scale-set instance's NIC: its id lives under the instance. */
  String scaleSetVmId;
  List<ObjectNode> configs = new ArrayList<>();
  ObjectNode tags = JsonNodeFactory.instance.objectNode();
  String nsgId;
  List<String> dnsServers = List.of();
  boolean acceleratedNetworking;
  boolean ipForwarding;
  String etag;
  String state = "Succeeded";
  String runningOperation;

  Nic(String subscription, String rg, String name) {
    this.subscription = subscription;
    this.rg = rg;
    this.name = name;
  }

  String id() {
    return scaleSetVmId != null ? scaleSetVmId + "/networkInterfaces/" + name : "/subscriptions/" + subscription
        + "/resourceGroups/" + rg + "/providers/Microsoft.Network/networkInterfaces/" + name;
  }
}
