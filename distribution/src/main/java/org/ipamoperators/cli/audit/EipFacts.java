package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2Clients;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIpException;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.core.audit.EipChecks;
import org.ipamoperators.core.audit.EipShown;
import org.ipamoperators.core.audit.ElasticAddress;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * Reads, and never changes, the Elastic IPs of the eip controller: every address EC2 tags with this cluster's
 * name, and each allocation an Eip's status names (to tell one EC2 no longer has). DescribeAddresses only: one
 * call with the cluster's tag, one per allocation named by an Eip and not tagged for the cluster.
 */
public final class EipFacts {
  private final List<Finding> findings;
  private final String note;
  private final Map<String, Eip> byOwner;

  private EipFacts(List<Finding> findings, String note, Map<String, Eip> byOwner) {
    this.findings = findings;
    this.note = note;
    this.byOwner = byOwner;
  }

  /** Nothing read. */
  public static final EipFacts NONE = new EipFacts(List.of(), null, Map.of());

  public List<Finding> findings() {
    return findings;
  }

  public String note() {
    return note;
  }

  /** The Eips a finding names, for Events. */
  public List<HasMetadata> objectsAtFault(Finding f) {
    if (!EipChecks.SPACE.equals(f.resource().space())) {
      return List.of();
    }
    return f.parties().stream().map(byOwner::get).filter(java.util.Objects::nonNull).map(e -> (HasMetadata) e)
        .toList();
  }

  /**
   * Reads EC2's side and checks it against the Eips read from the cluster.
   *
   * @param eips the cluster's Eips
   * @param clusterName the eip controller's cluster name (its {@code cluster_name} tag)
   * @param aws the EC2 settings
   * @return the findings
   * @throws CloudFacts.CloudUnreadable when EC2 cannot be read
   */
  public static EipFacts read(List<Eip> eips, String clusterName, AwsSettings aws) {
    return read(eips, clusterName, null, aws);
  }

  /**
   * As {@link #read(List, String, AwsSettings)}, for an eip controller that serves one namespace only: the Eips and
   * the addresses tagged for other namespaces are another controller's.
   */
  public static EipFacts read(List<Eip> eips, String clusterName, String namespace, AwsSettings aws) {
    try (Ec2Client ec2 = Ec2Clients.build(aws)) {
      return read(eips, clusterName, namespace, new ElasticIps(ec2));
    }
  }

  static EipFacts read(List<Eip> all, String clusterName, String namespace, ElasticIps ec2) {
    List<Eip> eips = namespace == null || namespace.isBlank() ? all
        : all.stream().filter(e -> namespace.equals(e.getMetadata().getNamespace())).toList();
    List<EipShown> shown = new ArrayList<>();
    Map<String, Eip> byOwner = new HashMap<>();
    Set<String> named = new TreeSet<>();
    for (Eip e : eips) {
      String name = e.getMetadata().getNamespace() + "/" + e.getMetadata().getName();
      String owner = "eip/Eip/" + name;
      byOwner.put(owner, e);
      var s = e.getStatus();
      String alloc = s == null || s.allocationId() == null || s.allocationId().isBlank() ? null : s.allocationId();
      shown.add(new EipShown(owner, alloc, s == null ? null : blank(s.eni()), s == null ? null : blank(s.privateIpAddress()),
          "Eip " + name + " status"));
      if (alloc != null) {
        named.add(alloc);
      }
    }
    List<ElasticAddress> addresses = new ArrayList<>();
    try {
      Set<String> seen = new TreeSet<>();
      Map<String, String> tags = namespace == null || namespace.isBlank() ? Map.of(EipNames.TAG_CLUSTER, clusterName)
          : Map.of(EipNames.TAG_CLUSTER, clusterName, EipNames.TAG_NAMESPACE, namespace);
      for (ElasticIp a : ec2.withTags(tags)) {
        addresses.add(address(a, clusterName));
        seen.add(a.allocationId());
      }
      for (String id : named) {
        if (!seen.contains(id)) {
          ec2.byAllocationId(id).ifPresent(a -> addresses.add(address(a, clusterName)));
        }
      }
    } catch (ElasticIpException e) {
      throw new CloudFacts.CloudUnreadable("cannot read the Elastic IPs: " + e.getMessage(), e);
    }
    return new EipFacts(EipChecks.check(shown, addresses), "EC2: " + addresses.size() + " Elastic IPs of cluster "
        + clusterName + " or named by its " + eips.size() + " Eips", byOwner);
  }

  private static ElasticAddress address(ElasticIp a, String clusterName) {
    String owner = clusterName.equals(a.tag(EipNames.TAG_CLUSTER)) && a.tag(EipNames.TAG_NAMESPACE) != null
        && a.tag(EipNames.TAG_NAME) != null ? "eip/Eip/" + a.tag(EipNames.TAG_NAMESPACE) + "/" + a.tag(EipNames.TAG_NAME)
        : null;
    return new ElasticAddress(a.allocationId(), a.publicIp(), owner, a.networkInterfaceId(), a.privateIp());
  }

  private static String blank(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
