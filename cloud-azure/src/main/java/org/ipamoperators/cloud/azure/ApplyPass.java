package org.ipamoperators.cloud.azure;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;

/**
 * One {@link AzureNodeNetwork#apply} call: its changes, their results as they are settled, when moved addresses left
 * their NIC.
 */
final class ApplyPass {
  final List<AddressChange> changes;
  final AddressChangeResult[] results;
  final Map<Ip, Instant> released = new ConcurrentHashMap<>();

  ApplyPass(List<AddressChange> changes) {
    this.changes = changes;
    this.results = new AddressChangeResult[changes.size()];
  }

  /** The changes of a node no describe knows of fail (retryable: the next describe may know it). */
  void notDescribed(Map<Ip, Integer> which, String node) {
    which.forEach((ip, i) -> results[i] = AddressChangeResult.failed(changes.get(i), "NodeNotDescribed", "node "
        + node + " has no known Azure VM (its description failed or was never made)", true));
  }

  List<AddressChangeResult> finish() {
    for (int i = 0; i < results.length; i++) {
      if (results[i] == null) {
        results[i] = AddressChangeResult.failed(changes.get(i), "NotApplied", "no call was made for this change", true);
      }
    }
    return List.of(results);
  }
}
