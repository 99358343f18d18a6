package org.ipamoperators.cloud.aws;

import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * What {@link Ec2NodeNetwork#describe} found of a node, for {@link Ec2NodeNetwork#apply}: its
 * device-index-0 ENI, the secondary addresses on it and those its ownership tags list. The sets are
 * concurrent and kept current by the changes: IPAMs reconcile in parallel and share this view.
 */
record NodeEni(String node, String instanceId, String eniId, String subnetId, Set<Ip> secondaries,
    Set<Ip> tagged, boolean ipv6) {
  boolean owns(Ip ip) {
    return secondaries.contains(ip) && tagged.contains(ip);
  }

  String where() {
    return eniId + " of node " + node + " (" + instanceId + ")";
  }
}
