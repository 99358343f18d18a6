package org.ipamoperators.testsupport.arm;

import java.util.ArrayList;
import java.util.List;

/** A virtual machine: its NIC ids, the last one primary (a second NIC is listed first). */
final class Vm {
  final String subscription;
  final String rg;
  final String name;
  final List<String> nics = new ArrayList<>();
  /** Whether the VM's NIC references carry the primary flag (Azure sends it only with several NICs). */
  boolean primaryFlagged;
  /** A Flexible scale set's VM: the set's id. */
  String scaleSet;

  Vm(String subscription, String rg, String name) {
    this.subscription = subscription;
    this.rg = rg;
    this.name = name;
  }

  String id() {
    return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Compute/virtualMachines/"
        + name;
  }

  String primaryNic() {
    return nics.get(nics.size() - 1);
  }
}
