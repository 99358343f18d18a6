package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.audit.Attachment;
import org.ipamoperators.core.audit.CloudView;
import org.ipamoperators.core.audit.OvnPlacements;
import org.ipamoperators.core.audit.Placement;
import org.ipamoperators.core.audit.Resource;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.egressip.EgressFacts;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.NodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.network.Platform;

/**
 * Reads, and never changes, the cloud side of the egress addresses: on each node's interface the
 * addresses marked as attached by the egress operator, and, from the HostSubnets (OpenShift SDN) or
 * the EgressIPs' status (OVN-Kubernetes), the node the cluster network routes each address through.
 * The cloud is found and configured as the egress controller finds it ({@link Platform#detect}, the same
 * settings, environment variables and credentials Secret), through the cloud's NodeNetwork: its
 * {@code describe} reports the addresses the egress operator marked as its own (ENI ownership tags, Azure's
 * {@code ipam-egress-} ip configurations). Where the platform needs no cloud API there is nothing to read: the
 * view is {@link CloudView#NONE} and {@link #note} says why.
 */
public final class CloudFacts {
  private final CloudView view;
  private final String note;
  private final Map<Attachment, Node> nodes;
  private final Map<Placement, HasMetadata> placers;
  private final Map<String, Node> byName;

  private CloudFacts(CloudView view, String note, Map<Attachment, Node> nodes, Map<Placement, HasMetadata> placers,
      Map<String, Node> byName) {
    this.view = view;
    this.note = note;
    this.nodes = nodes;
    this.placers = placers;
    this.byName = byName;
  }

  private CloudFacts(String note) {
    this(CloudView.NONE, note, Map.of(), Map.of(), Map.of());
  }

  /** Nothing read (the cloud is not asked for). */
  public static final CloudFacts NONE = new CloudFacts(null);

  /**
   * The objects a cloud finding is about, for Events: the Node that could not be read; the Nodes whose
   * interfaces hold the address and the HostSubnets or EgressIPs routing it, among the finding's parties.
   */
  public List<HasMetadata> objectsAtFault(org.ipamoperators.core.audit.Finding f) {
    List<HasMetadata> out = new ArrayList<>();
    if (f.kind() == org.ipamoperators.core.audit.FindingKind.UNKNOWN) {
      Node n = byName.get(f.resource().value());
      if (n != null) {
        out.add(n);
      }
      return out;
    }
    view.attachments().stream().filter(a -> a.resource().equals(f.resource()) && f.parties().contains(a.node()))
        .map(nodes::get).filter(java.util.Objects::nonNull).forEach(out::add);
    view.placements().stream().filter(p -> p.resource().equals(f.resource()) && f.parties().contains(p.node()))
        .map(placers::get).filter(java.util.Objects::nonNull).forEach(out::add);
    return out.stream().distinct().toList();
  }

  public CloudView view() {
    return view;
  }

  /** What was read, or why nothing was: for the report. */
  public String note() {
    return note;
  }

  /** The Node an attachment was found on, for an Event. */
  public Node node(Attachment a) {
    return nodes.get(a);
  }

  /** The object that routes a placed address, for an Event. */
  public HasMetadata placer(Placement p) {
    return placers.get(p);
  }

  /** The platform override the egress controller uses by default ({@code IPAM_PLATFORM}). */
  public static String platformOverride() {
    String v = System.getenv(org.ipamoperators.egressip.EgressSettings.PLATFORM);
    return v == null || v.isBlank() ? null : v.trim();
  }

  /**
   * Reads the cloud of the cluster's platform.
   *
   * @param client the cluster
   * @param settings the egress controller's cloud settings
   * @param platformOverride the platform type when there is no Infrastructure to say it, or null
   * @return the view; NONE with a note where the platform has no cloud interfaces this audit reads
   * @throws CloudUnreadable when the cloud cannot be configured (no region, half a key pair)
   */
  public static CloudFacts read(KubernetesClient client, CloudSettings settings, String platformOverride) {
    Platform platform = Platform.detect(client, platformOverride);
    if (!platform.needsCloudApi() && settings.provider() == null) {
      return new CloudFacts("platform " + platform.type() + " attaches egress addresses through the"
          + " cluster network alone: no cloud interface to read");
    }
    // Every cloud through its NodeNetwork, as the egress controller reads it: describe reports what it marked.
    try (CloudNodeNetworks networks = new CloudNodeNetworks(client, settings)) {
      return read(client, networks, platform);
    }
  }

  /**
   * Reads each node's interface through the cloud's {@link org.ipamoperators.core.spi.NodeNetwork} (what
   * {@code describe} reports as marked by the egress operator); tests may bring their own network.
   *
   * @throws CloudUnreadable when no network serves the platform (no provider, incomplete settings)
   */
  public static CloudFacts read(KubernetesClient client, NodeNetworks networks, Platform platform) {
    NodeNetworks.Selection selection = networks.select(platform);
    if (selection.problem() != null) {
      throw new CloudUnreadable(selection.problem(), null);
    }
    return readNodes(client, platform.type(), n -> {
      NodeAttachment a = selection.network().describe(new NodeRef(n.getMetadata().getName(),
          EgressFacts.providerId(n), EgressFacts.labels(n), List.copyOf(EgressFacts.ownAddresses(n, null))));
      String kind = Ec2NodeNetworkProvider.NAME.equals(selection.provider()) ? "ENI " : "interface ";
      return new Marked(a.marked(), kind + a.interfaceId() + " of node " + n.getMetadata().getName());
    });
  }

  /** What one node's interface holds marked as the egress operator's, and how to name that interface. */
  private record Marked(java.util.Collection<Ip> addresses, String where) {}

  /** Reads one node's interface. */
  private interface NodeReader {
    Marked read(Node node) throws NodeNetworkException;
  }

  /** Every node's interface through {@code reader}; a node that cannot be read is unknown, never a reason to stop. */
  private static CloudFacts readNodes(KubernetesClient client, String cloud, NodeReader reader) {
    List<Node> all = client.nodes().list().getItems();
    List<Attachment> attachments = new ArrayList<>();
    Set<String> described = new TreeSet<>();
    Map<String, String> unknown = new TreeMap<>();
    Map<Attachment, Node> byAttachment = new HashMap<>();
    Map<String, Node> byName = new HashMap<>();
    for (Node n : all) {
      String name = n.getMetadata().getName();
      byName.put(name, n);
      try {
        Marked marked = reader.read(n);
        described.add(name);
        for (Ip ip : new TreeSet<>(marked.addresses())) {
          Attachment a = new Attachment(Resource.ip(ip.toString()), name, marked.where());
          attachments.add(a);
          byAttachment.put(a, n);
        }
      } catch (NodeNetworkException e) {
        unknown.put(name, e.getMessage());
      } catch (RuntimeException e) {
        unknown.put(name, e.toString()); // one node's surprise never hides the others
      }
    }
    Map<Placement, HasMetadata> placers = placements(client);
    String note = cloud + ": read " + described.size() + " of " + all.size() + " nodes' interfaces, "
        + attachments.size() + " addresses attached by the egress operator, " + placers.size() + " placements ("
        + count(placers, HostSubnet.class) + " from HostSubnets, "
        + count(placers, GenericKubernetesResource.class) + " from OVN EgressIPs)";
    return new CloudFacts(CloudView.of(attachments, List.copyOf(placers.keySet()), described, unknown), note,
        byAttachment, placers, byName);
  }

  private static long count(Map<Placement, HasMetadata> placers, Class<?> kind) {
    return placers.values().stream().filter(kind::isInstance).count();
  }

  /**
   * The node the cluster network routes each egress address through, with the object saying so: OpenShift SDN's
   * HostSubnets ({@code egressIPs}) and OVN-Kubernetes' EgressIPs of this suite ({@code status.items}, where OVN
   * placed each address). A cluster without one of these kinds has none of its placements.
   */
  private static Map<Placement, HasMetadata> placements(KubernetesClient client) {
    Map<Placement, HasMetadata> placers = new java.util.LinkedHashMap<>();
    for (HostSubnet hs : hostSubnets(client)) {
      String node = hs.getHost() != null ? hs.getHost() : hs.getMetadata().getName();
      for (String raw : hs.getEgressIPs() == null ? List.<String>of() : hs.getEgressIPs()) {
        try {
          placers.put(new Placement(Resource.ip(Ip.parse(raw.trim()).toString()), node,
              "HostSubnet " + hs.getMetadata().getName() + " egressIPs"), hs);
        } catch (RuntimeException e) {
          // not an address: the egress controller reports it on its objects
        }
      }
    }
    for (GenericKubernetesResource e : ovnEgressIps(client)) {
      Map<String, Object> p = e.getAdditionalProperties();
      OvnPlacements.of(e.getMetadata().getName(), p.get("spec"), p.get("status")).forEach(x -> placers.put(x, e));
    }
    return placers;
  }

  /**
   * The EC2 settings the egress controller would use: region, endpoint, the credentials Secret's keys.
   *
   * @throws CloudUnreadable when they are incomplete
   */
  public static org.ipamoperators.cloud.aws.AwsSettings awsSettings(KubernetesClient client, CloudSettings settings,
      Platform platform) {
    try {
      return Ec2NodeNetworkProvider.settings(context(new Ec2NodeNetworkProvider(), client, settings, platform));
    } catch (NodeNetworkException e) {
      throw new CloudUnreadable("cannot configure EC2: " + e.getMessage(), e);
    }
  }

  private static List<HostSubnet> hostSubnets(KubernetesClient client) {
    try {
      return client.resources(HostSubnet.class).list().getItems();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return List.of(); // no OpenShift SDN: nothing routes addresses through named nodes
      }
      throw e;
    }
  }

  /** The EgressIPs the egress controller wrote (its label, its name prefix); none where OVN's kind is not served. */
  private static List<GenericKubernetesResource> ovnEgressIps(KubernetesClient client) {
    try {
      return client.genericKubernetesResources(ClusterFacts.OVN_EGRESS_IP).withLabel(EgressAnnotations.MANAGED_BY)
          .list().getItems().stream().filter(e -> e.getMetadata().getName().startsWith(ClusterFacts.OVN_NAME_PREFIX))
          .toList();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return List.of(); // no OVN-Kubernetes: OVN places nothing
      }
      throw e;
    }
  }

  /** The provider context the egress controller builds: the platform's attributes, the settings, the Secrets. */
  private static ProviderContext context(NodeNetworkProvider provider, KubernetesClient client, CloudSettings settings,
      Platform platform) {
    Map<String, String> attributes = new HashMap<>(platform.attributes());
    if (platform.awsRegion() != null) {
      attributes.put("region", platform.awsRegion());
    }
    Map<String, String> values = new HashMap<>();
    for (ProviderSetting s : provider.settings()) {
      String v = settings.value(s);
      if (v != null) {
        values.put(s.key(), v);
      }
    }
    CloudNodeNetworks.SecretReader secrets = CloudNodeNetworks.clusterSecrets(client, settings);
    Map<String, Map<String, String>> data = new HashMap<>();
    for (String name : provider.secrets()) {
      Map<String, String> d = secrets.read(name);
      if (!d.isEmpty()) {
        data.put(name, d);
      }
    }
    return new ProviderContext(platform.type(), attributes, values, data);
  }

  /** The cloud cannot be asked at all (its settings are incomplete). */
  public static final class CloudUnreadable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CloudUnreadable(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
