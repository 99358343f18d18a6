package org.ipamoperators.cloud.aws.eip;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2Clients;
import org.ipamoperators.cloud.aws.ProviderId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagSpecification;

/**
 * The EC2 calls of Elastic IP management, one method per question or change, every failure an
 * {@link ElasticIpException} (throttling and 5xx are retried by the SDK first, see {@link Ec2Clients}). No
 * Kubernetes code and no decisions: callers decide what to allocate, associate or release.
 */
public final class ElasticIps {
  /** The account attribute holding the Elastic IP quota of the region. */
  static final String QUOTA_ATTRIBUTE = "vpc-max-elastic-ips";
  private static final Logger LOG = LoggerFactory.getLogger(ElasticIps.class);
  private final Ec2Client ec2;
  private final ServiceQuotas serviceQuotas;
  private volatile String quotaSource = "unknown";
  private volatile String serviceQuotasFailure;

  /** Without Service Quotas: the quota is the EC2 account attribute. */
  public ElasticIps(Ec2Client ec2) {
    this(ec2, null);
  }

  /** The quota from Service Quotas first (when given), else the EC2 account attribute. */
  public ElasticIps(Ec2Client ec2, ServiceQuotas serviceQuotas) {
    this.ec2 = ec2;
    this.serviceQuotas = serviceQuotas;
  }

  public static ElasticIps create(AwsSettings settings) {
    return new ElasticIps(Ec2Clients.build(settings), ServiceQuotas.create(settings));
  }

  /** Addresses carrying every one of these tags (DescribeAddresses with {@code tag:KEY} filters), oldest id first. */
  public List<ElasticIp> withTags(Map<String, String> tags) {
    List<Filter> filters = new ArrayList<>();
    new TreeMap<>(tags).forEach((k, v) -> filters.add(Filter.builder().name("tag:" + k).values(v).build()));
    return ElasticIpException.call("DescribeAddresses", () -> ec2.describeAddresses(r -> r.filters(filters)))
        .addresses().stream().map(ElasticIps::toElasticIp)
        .sorted(Comparator.comparing(ElasticIp::allocationId)).toList();
  }

  /** Every address of the account in the region (for the quota in use). */
  public int count() {
    return ElasticIpException.call("DescribeAddresses", () -> ec2.describeAddresses()).addresses().size();
  }

  /** The address of an allocation id; empty when it does not exist (released by someone). */
  public Optional<ElasticIp> byAllocationId(String allocationId) {
    try {
      return ElasticIpException.call("DescribeAddresses", () -> ec2.describeAddresses(r -> r.allocationIds(allocationId)))
          .addresses().stream().findFirst().map(ElasticIps::toElasticIp);
    } catch (ElasticIpException e) {
      if (e.code().startsWith("InvalidAllocationID")) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Allocates a VPC address with these tags in the same call (so an address never exists untagged), from a BYOIP
   * public IPv4 pool when one is named.
   */
  public ElasticIp allocate(Map<String, String> tags, String publicIpv4Pool) {
    List<Tag> tagList = new TreeMap<>(tags).entrySet().stream()
        .map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build()).toList();
    var answer = ElasticIpException.call("AllocateAddress", () -> ec2.allocateAddress(r -> {
      r.domain(DomainType.VPC).tagSpecifications(TagSpecification.builder()
          .resourceType(ResourceType.ELASTIC_IP).tags(tagList).build());
      if (publicIpv4Pool != null && !publicIpv4Pool.isBlank()) {
        r.publicIpv4Pool(publicIpv4Pool);
      }
    }));
    return new ElasticIp(answer.allocationId(), answer.publicIp(), null, null, null, null,
        answer.publicIpv4Pool(), tags);
  }

  /**
   * Associates the address with a private address of an ENI, taking it from wherever it is
   * ({@code AllowReassociation}); returns the association id.
   */
  public String associate(String allocationId, String networkInterfaceId, String privateIp) {
    return ElasticIpException.call("AssociateAddress", () -> ec2.associateAddress(r -> r.allocationId(allocationId)
        .networkInterfaceId(networkInterfaceId).privateIpAddress(privateIp).allowReassociation(true)))
        .associationId();
  }

  /** Disassociates; an association that is already gone is success. */
  public void disassociate(String associationId) {
    try {
      ElasticIpException.call("DisassociateAddress", () -> ec2.disassociateAddress(r -> r.associationId(associationId)));
    } catch (ElasticIpException e) {
      if (!e.code().startsWith("InvalidAssociationID")) {
        throw e;
      }
    }
  }

  /** Releases the address; false when it was already gone. */
  public boolean release(String allocationId) {
    try {
      ElasticIpException.call("ReleaseAddress", () -> ec2.releaseAddress(r -> r.allocationId(allocationId)));
      return true;
    } catch (ElasticIpException e) {
      if (e.code().startsWith("InvalidAllocationID")) {
        return false;
      }
      throw e;
    }
  }

  /** Adds (or overwrites) tags on an address, such as ours on an adopted one. */
  public void tag(String allocationId, Map<String, String> tags) {
    List<Tag> tagList = new TreeMap<>(tags).entrySet().stream()
        .map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build()).toList();
    ElasticIpException.call("CreateTags", () -> ec2.createTags(r -> r.resources(allocationId).tags(tagList)));
  }

  /** Removes tags (by key) from an address, such as ours from a retained one. */
  public void untag(String allocationId, List<String> keys) {
    List<Tag> tagList = keys.stream().map(k -> Tag.builder().key(k).build()).toList();
    ElasticIpException.call("DeleteTags", () -> ec2.deleteTags(r -> r.resources(allocationId).tags(tagList)));
  }

  /**
   * The region's Elastic IP quota: Service Quotas' {@code ec2}/{@code L-0263D0A3} (AWS's current source, which
   * shows an approved increase), else, when Service Quotas cannot answer (no {@code servicequotas:GetServiceQuota}
   * permission, no such quota, unreachable), the EC2 account attribute {@code vpc-max-elastic-ips}; empty when
   * neither reports one. {@link #quotaSource()} tells which answered.
   */
  public OptionalInt quota() {
    if (serviceQuotas != null) {
      try {
        OptionalInt q = serviceQuotas.quota(ServiceQuotas.EC2, ServiceQuotas.ELASTIC_IPS);
        if (q.isPresent()) {
          serviceQuotasFailure = null;
          quotaSource = "Service Quotas " + ServiceQuotas.ELASTIC_IPS;
          return q;
        }
      } catch (ElasticIpException e) {
        if (!e.code().equals(serviceQuotasFailure)) {
          LOG.info("Service Quotas gives no Elastic IP quota ({}): reading the EC2 account attribute {} instead",
              e.getMessage(), QUOTA_ATTRIBUTE);
        }
        serviceQuotasFailure = e.code();
      }
    }
    OptionalInt q = accountAttributeQuota();
    if (q.isPresent()) {
      quotaSource = "EC2 account attribute " + QUOTA_ATTRIBUTE;
    }
    return q;
  }

  /** Where the last quota came from: Service Quotas or the EC2 account attribute. */
  public String quotaSource() {
    return quotaSource;
  }

  private OptionalInt accountAttributeQuota() {
    var answer = ElasticIpException.call("DescribeAccountAttributes",
        () -> ec2.describeAccountAttributes(r -> r.attributeNamesWithStrings(QUOTA_ATTRIBUTE)));
    return answer.accountAttributes().stream().filter(a -> QUOTA_ATTRIBUTE.equals(a.attributeName()))
        .flatMap(a -> a.attributeValues().stream()).map(v -> v.attributeValue())
        .filter(v -> v != null && v.matches("\\d+")).mapToInt(Integer::parseInt).findFirst();
  }

  /** The instance id of a node's {@code spec.providerID}; empty for a non-AWS or malformed one (Fargate, kind). */
  public static Optional<String> instanceId(String providerId) {
    return ProviderId.instanceId(providerId);
  }

  /** The network interfaces of an instance with their private addresses (DescribeInstances). */
  public List<InstanceInterface> interfaces(String instanceId) {
    List<Instance> instances = ElasticIpException.call("DescribeInstances",
        () -> ec2.describeInstances(r -> r.instanceIds(instanceId))).reservations().stream()
        .flatMap(r -> r.instances().stream()).toList();
    List<InstanceInterface> out = new ArrayList<>();
    for (Instance i : instances) {
      for (InstanceNetworkInterface n : i.networkInterfaces()) {
        List<String> ips = new ArrayList<>();
        n.privateIpAddresses().forEach(a -> ips.add(a.privateIpAddress()));
        if (ips.isEmpty() && n.privateIpAddress() != null) {
          ips.add(n.privateIpAddress());
        }
        int index = n.attachment() == null || n.attachment().deviceIndex() == null ? -1 : n.attachment().deviceIndex();
        out.add(new InstanceInterface(n.networkInterfaceId(), index, ips));
      }
    }
    out.sort(Comparator.comparingInt(InstanceInterface::deviceIndex));
    return out;
  }

  /** The ENI of the instance that holds this private address, if any. */
  public Optional<String> interfaceHolding(String instanceId, String privateIp) {
    return interfaces(instanceId).stream().filter(n -> n.privateIps().contains(privateIp))
        .map(InstanceInterface::networkInterfaceId).findFirst();
  }

  static ElasticIp toElasticIp(Address a) {
    Map<String, String> tags = new TreeMap<>();
    a.tags().forEach(t -> tags.put(t.key(), t.value()));
    return new ElasticIp(a.allocationId(), a.publicIp(), blankToNull(a.associationId()),
        blankToNull(a.networkInterfaceId()), blankToNull(a.privateIpAddress()), blankToNull(a.instanceId()),
        blankToNull(a.publicIpv4Pool()), tags);
  }

  private static String blankToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
