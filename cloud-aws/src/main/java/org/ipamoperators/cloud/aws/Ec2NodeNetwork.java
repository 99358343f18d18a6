package org.ipamoperators.cloud.aws;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.InstanceStateName;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterfaceIpv6Address;
import software.amazon.awssdk.services.ec2.model.NetworkInterfacePrivateIpAddress;
import software.amazon.awssdk.services.ec2.model.Tag;

/**
 * {@link NodeNetwork} on EC2: egress addresses are secondary private IPv4 addresses (or IPv6
 * addresses) of the device-index-0 ENI of the instance named by the node's {@code spec.providerID}.
 *
 * <p>Ownership: the addresses this operator attached to an ENI are listed in tags on it,
 * {@value #OWNED_TAGS_PREFIX}{@code <n>}, each value a space-separated list of addresses of at most
 * 256 characters (16 IPv4 or 6 IPv6 addresses per tag), so a dense ENI (49 IPv4 secondaries and
 * IPv6 addresses) needs a handful of tags, far from EC2's 50 tags per resource; the one-tag-per-address
 * form ({@value #OWNED_TAG_PREFIX}{@code <address>}) is read as well and replaced at the next write. Those tags are the cloud-side ledger: only listed addresses are ever
 * unassigned or moved away, so secondary addresses of other tools are never touched. An address
 * is listed before it is assigned, so a crash in between leaves a listed address that is not there
 * (ignored) rather than an address nobody owns.
 *
 * <p>{@link #describe} reports every secondary address of the ENI (the caller decides which are its
 * own), and among them those the tags list ({@link NodeAttachment#marked}); the capacity is the instance type's IPv4 addresses per interface, minus the primary, minus
 * secondary addresses this operator did not attach. Discovery failures are exceptions; {@link #apply}
 * gives one result per change, each failure with the EC2 call and AWS error code, and one node's
 * failure never stops another node's calls. Throttling and 5xx answers are retried by the SDK
 * (see {@link Ec2Clients}).
 */
public final class Ec2NodeNetwork implements NodeNetwork, AutoCloseable {
  public static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";
  public static final String BETA_INSTANCE_TYPE_LABEL = "beta.kubernetes.io/instance-type";
  /** Tag key prefix of the one-tag-per-address form (read, and replaced by packed tags when written). */
  public static final String OWNED_TAG_PREFIX = "ipam.ipamoperators.org/egress-ip/";
  /** Tag key prefix on an ENI: tags {@code <prefix>0, 1, ...} list the addresses this operator attached. */
  public static final String OWNED_TAGS_PREFIX = "ipam.ipamoperators.org/egress-ips-";

  private final Ec2Client ec2;
  private final boolean ownsClient;
  private final InstanceTypeLimits types;
  private final Ec2Subnets subnets;
  /** The described ENIs by node name: written here, read and kept current by the changes. */
  private final Map<String, NodeEni> nodes = new ConcurrentHashMap<>();
  private final EniAddressChanges addressChanges;

  /** With an existing client, which the caller closes. */
  public Ec2NodeNetwork(Ec2Client ec2, Clock clock, Duration capacityCacheTtl) {
    this(ec2, false, clock, capacityCacheTtl);
  }

  private Ec2NodeNetwork(Ec2Client ec2, boolean ownsClient, Clock clock, Duration capacityCacheTtl) {
    this.ec2 = ec2;
    this.ownsClient = ownsClient;
    this.types = new InstanceTypeLimits(ec2, clock, capacityCacheTtl);
    this.subnets = new Ec2Subnets(ec2, clock);
    this.addressChanges = new EniAddressChanges(ec2, nodes, new EniOwnership(ec2));
  }

  /** With a client of its own, built from the settings; {@link #close} closes it. */
  public static Ec2NodeNetwork create(AwsSettings settings) {
    return new Ec2NodeNetwork(Ec2Clients.build(settings), true, Clock.systemUTC(), settings.capacityCacheTtl());
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(true, true, true, true, true);
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    String instanceId = ProviderId.instanceId(node.providerId()).orElseThrow(() -> new NodeNetworkException(
        node.name(), "InvalidProviderID", "spec.providerID '" + node.providerId()
        + "' names no EC2 instance (expected aws:///<zone>/i-...)", false, null));
    try {
      Instance instance = liveInstance(instanceId);
      NetworkInterface eni = primaryEni(instance, instanceId);
      Ip primary = null;
      // Concurrent sets: IPAMs reconcile in parallel and share this network's view of the nodes.
      Set<Ip> secondaries = new ConcurrentSkipListSet<>();
      for (NetworkInterfacePrivateIpAddress a : eni.privateIpAddresses()) {
        Ip ip = Ip.parse(a.privateIpAddress());
        if (Boolean.TRUE.equals(a.primary())) {
          primary = ip;
        } else {
          secondaries.add(ip);
        }
      }
      for (NetworkInterfaceIpv6Address a : eni.ipv6Addresses()) {
        secondaries.add(Ip.parse(a.ipv6Address()));
      }
      Set<Ip> tagged = EniOwnership.listed(eni.tagSet());
      List<IpRange> blocks = subnets.blocks(eni.subnetId());
      boolean ipv6 = blocks.stream().anyMatch(b -> !b.first().isIPv4());
      NodeEni found = new NodeEni(node.name(), instanceId, eni.networkInterfaceId(), eni.subnetId(),
          secondaries, tagged, ipv6);
      nodes.put(node.name(), found);
      String type = instanceType(node, instance);
      InstanceTypeLimits.Limits limits = types.of(type);
      long foreignV4 = secondaries.stream().filter(Ip::isIPv4).filter(ip -> !found.owns(ip)).count();
      int capacity = (int) Math.max(0, limits.ipv4Secondary() - foreignV4);
      Set<Ip> marked = secondaries.stream().filter(found::owns).collect(Collectors.toSet());
      return new NodeAttachment(node.name(), eni.networkInterfaceId(), blocks, primary, secondaries, capacity, marked);
    } catch (Ec2CallFailed f) {
      nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for " + instanceId + ": " + f.getMessage(),
          f.retryable, f);
    }
  }

  /** The instance, unless it is gone or going (terminated, shutting down). */
  private Instance liveInstance(String instanceId) {
    Instance instance = Ec2CallFailed.call("DescribeInstances",
        () -> ec2.describeInstances(r -> r.instanceIds(instanceId))).reservations().stream()
        .flatMap(r -> r.instances().stream()).filter(i -> instanceId.equals(i.instanceId())).findFirst()
        .orElseThrow(() -> new Ec2CallFailed("DescribeInstances", "InvalidInstanceID.NotFound",
            "instance " + instanceId + " not found", false));
    InstanceStateName state = instance.state() == null ? null : instance.state().name();
    if (state == InstanceStateName.TERMINATED || state == InstanceStateName.SHUTTING_DOWN) {
      throw new Ec2CallFailed("DescribeInstances", "InstanceTerminated", "instance " + instanceId + " is "
          + state, false);
    }
    return instance;
  }

  /** The ENI at device index 0 of the instance, as DescribeNetworkInterfaces has it now (with its tags). */
  private NetworkInterface primaryEni(Instance instance, String instanceId) {
    InstanceNetworkInterface primaryIf = primaryInterface(instance.networkInterfaces()).orElseThrow(
        () -> new Ec2CallFailed("DescribeInstances", "NoPrimaryNetworkInterface", "instance " + instanceId
            + " has no network interface at device index 0", false));
    return Ec2CallFailed.call("DescribeNetworkInterfaces",
        () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(primaryIf.networkInterfaceId())))
        .networkInterfaces().stream().findFirst().orElseThrow(() -> new Ec2CallFailed(
            "DescribeNetworkInterfaces", "InvalidNetworkInterfaceID.NotFound", "network interface "
            + primaryIf.networkInterfaceId() + " not found", false));
  }

  /** The interface at device index 0, whatever order the API lists the interfaces in. */
  static Optional<InstanceNetworkInterface> primaryInterface(List<InstanceNetworkInterface> interfaces) {
    return interfaces.stream()
        .filter(i -> i.attachment() != null && Integer.valueOf(0).equals(i.attachment().deviceIndex()))
        .findFirst();
  }

  private static String instanceType(NodeRef node, Instance instance) {
    String t = node.labels().get(INSTANCE_TYPE_LABEL);
    if (t == null || t.isBlank()) {
      t = node.labels().get(BETA_INSTANCE_TYPE_LABEL);
    }
    return t == null || t.isBlank() ? instance.instanceTypeAsString() : t;
  }

  /** The addresses the ownership tags list, in either form. */
  public static Set<Ip> ownedTags(List<Tag> tags) {
    return EniOwnership.listed(tags);
  }

  /**
   * Every address of every ENI in the subnets that hold or overlap {@code range}, plus the five
   * addresses AWS reserves in each subnet block (the first four and the last). A range no subnet
   * overlaps is an error: such addresses cannot be attached to any ENI.
   */
  @Override
  public Set<Ip> addressesInUse(IpRange range) throws NodeNetworkException {
    try {
      return subnets.addressesInUse(range);
    } catch (Ec2CallFailed f) {
      throw new NodeNetworkException(range.toString(), f.code, f.describe(), f.retryable, f);
    }
  }

  /**
   * Attachments and moves first, per target node (make before break: a move is one
   * AssignPrivateIpAddresses with AllowReassignment), then detachments, per source node. Only nodes
   * whose set changes are called; an address already on its target ENI costs no call.
   */
  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    return addressChanges.apply(changes);
  }

  @Override
  public void close() {
    if (ownsClient) {
      ec2.close();
    }
  }
}
