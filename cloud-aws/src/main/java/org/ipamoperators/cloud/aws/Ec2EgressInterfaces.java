package org.ipamoperators.cloud.aws;

import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.NodeNetworkException;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterfacePrivateIpAddress;

/**
 * Reads, and never changes, the interface {@link Ec2NodeNetwork} attaches egress addresses to (the
 * device-index-0 ENI of the node's instance) with the addresses its ownership tags mark as attached by
 * the operator: what {@code ipam audit} compares with the cluster. {@link Ec2NodeNetwork#describe}
 * reports every secondary address without those marks, so the audit reads them here, with the same
 * choice of interface and the same tag parser. Two calls per node: DescribeInstances and
 * DescribeNetworkInterfaces.
 */
public final class Ec2EgressInterfaces implements AutoCloseable {
  private final Ec2Client ec2;
  private final boolean ownsClient;

  /**
   * One node's interface as EC2 shows it now.
   *
   * @param node the node
   * @param instanceId its instance
   * @param eniId the device-index-0 ENI
   * @param secondaries every secondary address on the ENI (IPv4 and IPv6)
   * @param owned the secondary addresses the ownership tags list (addresses listed but not assigned are left out)
   */
  public record NodeInterface(String node, String instanceId, String eniId, Set<Ip> secondaries, Set<Ip> owned) {
    /** Copies the sets. */
    public NodeInterface {
      secondaries = Set.copyOf(secondaries);
      owned = Set.copyOf(owned);
    }
  }

  /** With a client the caller closes. */
  public Ec2EgressInterfaces(Ec2Client ec2) {
    this(ec2, false);
  }

  private Ec2EgressInterfaces(Ec2Client ec2, boolean ownsClient) {
    this.ec2 = ec2;
    this.ownsClient = ownsClient;
  }

  /** With a client of its own, built from the settings the egress operator uses; {@link #close} closes it. */
  public static Ec2EgressInterfaces create(AwsSettings settings) {
    return new Ec2EgressInterfaces(Ec2Clients.build(settings), true);
  }

  /**
   * Reads one node's interface.
   *
   * @param node the node's name
   * @param providerId its {@code spec.providerID}
   * @return the interface and the addresses marked as the operator's
   * @throws NodeNetworkException when the node names no instance, the instance is gone or has no
   *     device-index-0 interface, or EC2 fails: the node is then unknown to the audit
   */
  public NodeInterface read(String node, String providerId) throws NodeNetworkException {
    String instanceId = ProviderId.instanceId(providerId).orElseThrow(() -> new NodeNetworkException(node,
        "InvalidProviderID", "spec.providerID '" + providerId + "' names no EC2 instance", false, null));
    try {
      Instance instance = Ec2CallFailed.call("DescribeInstances",
          () -> ec2.describeInstances(r -> r.instanceIds(instanceId))).reservations().stream()
          .flatMap(r -> r.instances().stream()).filter(i -> instanceId.equals(i.instanceId())).findFirst()
          .orElseThrow(() -> new Ec2CallFailed("DescribeInstances", "InvalidInstanceID.NotFound",
              "instance " + instanceId + " not found", false));
      InstanceNetworkInterface primary = Ec2NodeNetwork.primaryInterface(instance.networkInterfaces())
          .orElseThrow(() -> new Ec2CallFailed("DescribeInstances", "NoPrimaryNetworkInterface", "instance "
              + instanceId + " has no network interface at device index 0", false));
      NetworkInterface eni = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(primary.networkInterfaceId())))
          .networkInterfaces().stream().findFirst().orElseThrow(() -> new Ec2CallFailed(
              "DescribeNetworkInterfaces", "InvalidNetworkInterfaceID.NotFound", "network interface "
              + primary.networkInterfaceId() + " not found", false));
      Set<Ip> secondaries = new TreeSet<>();
      for (NetworkInterfacePrivateIpAddress a : eni.privateIpAddresses()) {
        if (!Boolean.TRUE.equals(a.primary())) {
          secondaries.add(Ip.parse(a.privateIpAddress()));
        }
      }
      eni.ipv6Addresses().forEach(a -> secondaries.add(Ip.parse(a.ipv6Address())));
      Set<Ip> owned = new TreeSet<>(Ec2NodeNetwork.ownedTags(eni.tagSet()));
      owned.retainAll(secondaries); // listed before assigned: a listed address not there is not attached
      return new NodeInterface(node, instanceId, eni.networkInterfaceId(), secondaries, owned);
    } catch (Ec2CallFailed f) {
      throw new NodeNetworkException(node, f.code, f.call + " for " + instanceId + ": " + f.getMessage(),
          f.retryable, f);
    }
  }

  @Override
  public void close() {
    if (ownsClient) {
      ec2.close();
    }
  }
}
