package org.ipamoperators.eip;

import java.util.Map;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.api.EipNames;

/**
 * The Eip controller's EC2 writes. Each marks the draft's {@code awsChanged} before it is made, so that the address
 * snapshot is bypassed for this Eip until it is read again, whether the write succeeded or not.
 */
final class Ec2Apply {
  private final ElasticIps ec2;

  Ec2Apply(ElasticIps ec2) {
    this.ec2 = ec2;
  }

  void tag(ElasticIp address, Map<String, String> tags, StatusDraft status) {
    status.awsChanged = true;
    ec2.tag(address.allocationId(), tags);
  }

  /** A duplicate: disassociated if it is, then released. */
  void release(ElasticIp address, StatusDraft status) {
    status.awsChanged = true;
    if (address.associated()) {
      ec2.disassociate(address.associationId());
    }
    ec2.release(address.allocationId());
  }

  ElasticIp allocate(Map<String, String> tags, String publicIpv4Pool, StatusDraft status) {
    status.awsChanged = true;
    return ec2.allocate(tags, publicIpv4Pool);
  }

  /** Associates the address with the ENI's private IP; returns it as EC2 now has it. */
  ElasticIp associate(ElasticIp address, String eni, String privateIp, StatusDraft status) {
    status.awsChanged = true;
    String association = ec2.associate(address.allocationId(), eni, privateIp);
    return new ElasticIp(address.allocationId(), address.publicIp(), association, eni, privateIp, null,
        address.publicIpv4Pool(), address.tags());
  }

  /** Disassociates the address when it is associated; whether it was. */
  boolean disassociate(ElasticIp address, StatusDraft status) {
    if (!address.associated()) {
      return false;
    }
    status.awsChanged = true;
    ec2.disassociate(address.associationId());
    return true;
  }

  /** The Eip is deleted: disassociated, then released or (reclaimPolicy Retain) stripped of our tags. */
  void giveBack(ElasticIp address, boolean retain) {
    if (address.associated()) {
      ec2.disassociate(address.associationId());
    }
    if (retain) {
      ec2.untag(address.allocationId(), EipNames.RESERVED_TAGS);
    } else {
      ec2.release(address.allocationId());
    }
  }
}
