package org.ipamoperators.cloud.aws.eip;

import java.util.Map;

/**
 * One VPC Elastic IP as DescribeAddresses shows it: its allocation, public address, and the association (id, ENI,
 * private address, instance) when it has one, its BYOIP pool and its tags.
 */
public record ElasticIp(String allocationId, String publicIp, String associationId, String networkInterfaceId,
    String privateIp, String instanceId, String publicIpv4Pool, Map<String, String> tags) {

  public ElasticIp {
    tags = tags == null ? Map.of() : Map.copyOf(tags);
  }

  public boolean associated() {
    return associationId != null && !associationId.isEmpty();
  }

  /** Associated to exactly this private address (of this ENI when one is given). */
  public boolean associatedTo(String eni, String ip) {
    return associated() && ip != null && ip.equals(privateIp) && (eni == null || eni.equals(networkInterfaceId));
  }

  public String tag(String key) {
    return tags.get(key);
  }
}
