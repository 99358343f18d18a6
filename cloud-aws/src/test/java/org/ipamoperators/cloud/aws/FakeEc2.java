package org.ipamoperators.cloud.aws;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.AssignIpv6AddressesRequest;
import software.amazon.awssdk.services.ec2.model.AssignIpv6AddressesResponse;
import software.amazon.awssdk.services.ec2.model.AssignPrivateIpAddressesRequest;
import software.amazon.awssdk.services.ec2.model.AssignPrivateIpAddressesResponse;
import software.amazon.awssdk.services.ec2.model.CreateTagsRequest;
import software.amazon.awssdk.services.ec2.model.CreateTagsResponse;
import software.amazon.awssdk.services.ec2.model.DeleteTagsRequest;
import software.amazon.awssdk.services.ec2.model.DeleteTagsResponse;
import software.amazon.awssdk.services.ec2.model.DescribeInstanceTypesRequest;
import software.amazon.awssdk.services.ec2.model.DescribeInstanceTypesResponse;
import software.amazon.awssdk.services.ec2.model.DescribeInstancesRequest;
import software.amazon.awssdk.services.ec2.model.DescribeInstancesResponse;
import software.amazon.awssdk.services.ec2.model.DescribeNetworkInterfacesRequest;
import software.amazon.awssdk.services.ec2.model.DescribeNetworkInterfacesResponse;
import software.amazon.awssdk.services.ec2.model.DescribeSubnetsRequest;
import software.amazon.awssdk.services.ec2.model.DescribeSubnetsResponse;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterfaceAttachment;
import software.amazon.awssdk.services.ec2.model.InstanceStateName;
import software.amazon.awssdk.services.ec2.model.InstanceTypeInfo;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterfacePrivateIpAddress;
import software.amazon.awssdk.services.ec2.model.Reservation;
import software.amazon.awssdk.services.ec2.model.Subnet;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.UnassignIpv6AddressesRequest;
import software.amazon.awssdk.services.ec2.model.UnassignIpv6AddressesResponse;
import software.amazon.awssdk.services.ec2.model.UnassignPrivateIpAddressesRequest;
import software.amazon.awssdk.services.ec2.model.UnassignPrivateIpAddressesResponse;

/**
 * A hand-written {@link Ec2Client} for the few calls Ec2NodeNetwork makes, enforcing what moto
 * 5.1 does not: the per-ENI address limit of the instance type (PrivateIpAddressLimitExceeded),
 * subnet membership of an assigned address (InvalidParameterValue), an address held by another ENI
 * without AllowReassignment (InvalidParameterValue), atomic calls (a refused call assigns
 * nothing), and EC2's limit of 50 tags per resource (TagLimitExceeded). It also lists an instance's ENIs with the device-index-0 one last. Every other call
 * throws UnsupportedOperationException (the interface's default).
 */
final class FakeEc2 implements Ec2Client {
  private record FakeEni(String id, String subnet, String instance, int deviceIndex, String primary,
      List<String> secondaries, Map<String, String> tags) {}

  private final Map<String, IpRange> subnets = new LinkedHashMap<>();
  private final Map<String, String> instanceTypes = new HashMap<>();
  private final Map<String, Integer> ipv4PerInterface = new HashMap<>(Map.of("t3.micro", 2, "m5.large", 10,
      "m5.24xlarge", 50));
  private final Map<String, FakeEni> enis = new LinkedHashMap<>();
  private int next = 1;
  final List<String> calls = new ArrayList<>();

  String subnet(String cidr) {
    String id = "subnet-" + next++;
    subnets.put(id, IpRange.parse(cidr));
    return id;
  }

  /** An instance whose primary ENI holds {@code primary}, with extra ENIs listed before it. */
  String instance(String subnet, String type, String primary, int extraEnis) {
    String id = "i-" + String.format("%017x", next++);
    instanceTypes.put(id, type);
    Ip p = Ip.parse(primary);
    for (int d = extraEnis; d >= 1; d--) {
      p = p.next();
      eni(subnet, id, d, p.toString());
    }
    eni(subnet, id, 0, primary);
    return id;
  }

  private void eni(String subnet, String instance, int deviceIndex, String primary) {
    String id = "eni-" + next++;
    enis.put(id, new FakeEni(id, subnet, instance, deviceIndex, primary, new ArrayList<>(), new LinkedHashMap<>()));
  }

  String primaryEni(String instance) {
    return enis.values().stream().filter(e -> e.instance().equals(instance) && e.deviceIndex() == 0).findFirst()
        .orElseThrow().id();
  }

  Map<String, String> tags(String eni) {
    return Map.copyOf(enis.get(eni).tags());
  }

  void tag(String eni, String key, String value) {
    enis.get(eni).tags().put(key, value);
  }

  /** The ENI's secondary list itself, to set up a state by hand. */
  List<String> secondariesOf(String eni) {
    return enis.get(eni).secondaries();
  }

  List<String> secondaries(String eni) {
    return List.copyOf(enis.get(eni).secondaries());
  }

  private static Ec2Exception error(String code, String message) {
    return (Ec2Exception) Ec2Exception.builder().statusCode(400)
        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).build()).build();
  }

  @Override
  public DescribeInstancesResponse describeInstances(DescribeInstancesRequest r) {
    calls.add("DescribeInstances");
    List<Instance> out = new ArrayList<>();
    for (String id : r.instanceIds()) {
      if (!instanceTypes.containsKey(id)) {
        throw error("InvalidInstanceID.NotFound", "The instance ID '" + id + "' does not exist");
      }
      List<InstanceNetworkInterface> ifs = enis.values().stream().filter(e -> e.instance().equals(id))
          .map(e -> InstanceNetworkInterface.builder().networkInterfaceId(e.id()).subnetId(e.subnet())
              .attachment(InstanceNetworkInterfaceAttachment.builder().deviceIndex(e.deviceIndex()).build()).build())
          .toList();
      out.add(Instance.builder().instanceId(id).instanceType(instanceTypes.get(id))
          .state(s -> s.name(InstanceStateName.RUNNING)).networkInterfaces(ifs).build());
    }
    return DescribeInstancesResponse.builder().reservations(Reservation.builder().instances(out).build()).build();
  }

  @Override
  public DescribeNetworkInterfacesResponse describeNetworkInterfaces(DescribeNetworkInterfacesRequest r) {
    calls.add("DescribeNetworkInterfaces");
    List<NetworkInterface> out = new ArrayList<>();
    for (FakeEni e : enis.values()) {
      boolean byId = r.networkInterfaceIds().isEmpty() || r.networkInterfaceIds().contains(e.id());
      boolean bySubnet = r.filters().stream().filter(f -> f.name().equals("subnet-id"))
          .allMatch(f -> f.values().contains(e.subnet()));
      if (byId && bySubnet) {
        List<NetworkInterfacePrivateIpAddress> ips = new ArrayList<>();
        ips.add(NetworkInterfacePrivateIpAddress.builder().privateIpAddress(e.primary()).primary(true).build());
        e.secondaries().forEach(s -> ips.add(NetworkInterfacePrivateIpAddress.builder().privateIpAddress(s)
            .primary(false).build()));
        out.add(NetworkInterface.builder().networkInterfaceId(e.id()).subnetId(e.subnet())
            .privateIpAddress(e.primary()).privateIpAddresses(ips)
            .tagSet(e.tags().entrySet().stream().map(t -> Tag.builder().key(t.getKey()).value(t.getValue()).build())
                .toList()).build());
      }
    }
    return DescribeNetworkInterfacesResponse.builder().networkInterfaces(out).build();
  }

  @Override
  public DescribeSubnetsResponse describeSubnets(DescribeSubnetsRequest r) {
    calls.add("DescribeSubnets");
    List<Subnet> out = subnets.entrySet().stream()
        .filter(e -> r.subnetIds().isEmpty() || r.subnetIds().contains(e.getKey()))
        .map(e -> Subnet.builder().subnetId(e.getKey()).cidrBlock(e.getValue().toString()).build()).toList();
    return DescribeSubnetsResponse.builder().subnets(out).build();
  }

  @Override
  public DescribeInstanceTypesResponse describeInstanceTypes(DescribeInstanceTypesRequest r) {
    calls.add("DescribeInstanceTypes");
    List<InstanceTypeInfo> out = r.instanceTypesAsStrings().stream().filter(ipv4PerInterface::containsKey)
        .map(t -> InstanceTypeInfo.builder().instanceType(t).networkInfo(n -> n
            .ipv4AddressesPerInterface(ipv4PerInterface.get(t)).ipv6Supported(false)).build()).toList();
    return DescribeInstanceTypesResponse.builder().instanceTypes(out).build();
  }

  @Override
  public AssignPrivateIpAddressesResponse assignPrivateIpAddresses(AssignPrivateIpAddressesRequest r) {
    calls.add("AssignPrivateIpAddresses");
    FakeEni e = enis.get(r.networkInterfaceId());
    IpRange subnet = subnets.get(e.subnet());
    for (String ip : r.privateIpAddresses()) {
      if (!subnet.contains(Ip.parse(ip))) {
        throw error("InvalidParameterValue", "Address " + ip + " does not fall within the subnet's address range");
      }
      FakeEni holder = holder(ip);
      if (holder != null && holder != e && !Boolean.TRUE.equals(r.allowReassignment())) {
        throw error("InvalidParameterValue", "Address " + ip + " is in use by " + holder.id());
      }
    }
    int limit = ipv4PerInterface.get(instanceTypes.get(e.instance()));
    long adding = r.privateIpAddresses().stream().filter(ip -> !e.secondaries().contains(ip)).count();
    if (1 + e.secondaries().size() + adding > limit) {
      throw error("PrivateIpAddressLimitExceeded", "Number of private addresses will exceed limit.");
    }
    for (String ip : r.privateIpAddresses()) {
      FakeEni holder = holder(ip);
      if (holder != null && holder != e) {
        holder.secondaries().remove(ip);
      }
      if (!e.secondaries().contains(ip)) {
        e.secondaries().add(ip);
      }
    }
    return AssignPrivateIpAddressesResponse.builder().networkInterfaceId(e.id()).build();
  }

  private FakeEni holder(String ip) {
    return enis.values().stream().filter(x -> x.primary().equals(ip) || x.secondaries().contains(ip)).findFirst()
        .orElse(null);
  }

  @Override
  public UnassignPrivateIpAddressesResponse unassignPrivateIpAddresses(UnassignPrivateIpAddressesRequest r) {
    calls.add("UnassignPrivateIpAddresses");
    FakeEni e = enis.get(r.networkInterfaceId());
    for (String ip : r.privateIpAddresses()) {
      if (!e.secondaries().contains(ip)) {
        throw error("InvalidParameterValue", "Some of the specified addresses are not assigned to interface "
            + e.id());
      }
    }
    e.secondaries().removeAll(r.privateIpAddresses());
    return UnassignPrivateIpAddressesResponse.builder().build();
  }

  @Override
  public AssignIpv6AddressesResponse assignIpv6Addresses(AssignIpv6AddressesRequest r) {
    throw error("InvalidParameterValue", "no IPv6 in this fake");
  }

  @Override
  public UnassignIpv6AddressesResponse unassignIpv6Addresses(UnassignIpv6AddressesRequest r) {
    throw error("InvalidParameterValue", "no IPv6 in this fake");
  }

  @Override
  public CreateTagsResponse createTags(CreateTagsRequest r) {
    calls.add("CreateTags");
    for (String id : r.resources()) {
      Map<String, String> after = new LinkedHashMap<>(enis.get(id).tags());
      r.tags().forEach(t -> after.put(t.key(), t.value()));
      if (after.size() > 50) {
        throw error("TagLimitExceeded", "The maximum number of tags per resource (50) would be exceeded");
      }
      if (r.tags().stream().anyMatch(t -> t.value() != null && t.value().length() > 256)) {
        throw error("InvalidParameterValue", "Tag value exceeds the maximum length of 256 characters");
      }
      enis.get(id).tags().putAll(after);
    }
    return CreateTagsResponse.builder().build();
  }

  @Override
  public DeleteTagsResponse deleteTags(DeleteTagsRequest r) {
    calls.add("DeleteTags");
    for (String id : r.resources()) {
      r.tags().forEach(t -> enis.get(id).tags().remove(t.key()));
    }
    return DeleteTagsResponse.builder().build();
  }

  @Override
  public String serviceName() {
    return "ec2";
  }

  @Override
  public void close() {}
}
