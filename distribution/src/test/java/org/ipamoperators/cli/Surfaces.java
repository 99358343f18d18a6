package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;

/**
 * Every place the cluster publishes an address, read as one snapshot: the first LIST fixes an etcd revision and
 * every other kind is listed at exactly that revision ({@code resourceVersionMatch=Exact}), so two surfaces are never
 * compared across a moment in which one of them changed (the old holder read before its clear, the new one after its
 * publish would be a duplicate that never existed). The LISTs after the first run side by side.
 *
 * <p>Only entries whose value {@code ours} accepts are kept (the apiserver is shared by the test classes of a JVM);
 * a surface whose kind the apiserver does not serve is left out, and {@link #watched()} says which are read.
 */
final class Surfaces implements AutoCloseable {
  static final ResourceDefinitionContext OVN_EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips")
      .withNamespaced(false).build();

  /** One publication surface; {@code holderKind} is what {@link Entry#holder()} names. */
  enum Surface {
    NAMESPACE_ANNOTATION("namespace annotation egressips", "namespace"),
    NET_NAMESPACE("NetNamespace.egressIPs", "namespace"),
    OVN_EGRESS_IP("OVN EgressIP.spec.egressIPs", "namespace"),
    SERVICE_INGRESS("Service status.loadBalancer.ingress", "Service"),
    HOST_SUBNET_IPS("HostSubnet.egressIPs", "node"),
    HOST_SUBNET_CIDRS("HostSubnet.egressCIDRs", "node"),
    KEEPALIVED_CONFIG("keepalived ConfigMap virtual_ipaddress", "KeepalivedGroup"),
    /** Not a publication: the ledger (IPClaims, IPBlock entries), read at the same revision for the claim rule. */
    LEDGER("ledger (IPClaim, IPBlock entry)", "owner");

    final String text;
    final String holderKind;

    Surface(String text, String holderKind) {
      this.text = text;
      this.holderKind = holderKind;
    }

    /** Surfaces whose holders are the owners of an address (a namespace or a Service): one holder at a time. */
    boolean ownerSurface() {
      return this == NAMESPACE_ANNOTATION || this == NET_NAMESPACE || this == OVN_EGRESS_IP
          || this == SERVICE_INGRESS;
    }

    @Override
    public String toString() {
      return text;
    }
  }

  /** {@code value} (an address, a CIDR) shown on {@code surface} by {@code holder} (e.g. "namespace a"). */
  record Entry(Surface surface, String holder, String value) {
    @Override
    public String toString() {
      return value + " on " + holder + " (" + surface + ")";
    }
  }

  private final KubernetesClient client;
  private final Set<Surface> watched;
  private final String serviceNamespace;
  private final Predicate<String> ours;
  private boolean ledger;
  private final ExecutorService pool = Executors.newFixedThreadPool(4, r -> {
    Thread t = new Thread(r, "surfaces-reader");
    t.setDaemon(true);
    return t;
  });

  private Surfaces(KubernetesClient client, Set<Surface> wanted, String serviceNamespace, Predicate<String> ours) {
    this.client = client;
    this.serviceNamespace = serviceNamespace;
    this.ours = ours;
    Set<Surface> served = EnumSet.copyOf(wanted);
    if (!client.supports(NetNamespace.class)) {
      served.remove(Surface.NET_NAMESPACE);
    }
    if (!client.supports(HostSubnet.class)) {
      served.remove(Surface.HOST_SUBNET_IPS);
      served.remove(Surface.HOST_SUBNET_CIDRS);
    }
    if (!client.supports("k8s.ovn.org/v1", "EgressIP")) {
      served.remove(Surface.OVN_EGRESS_IP);
    }
    this.watched = served;
  }

  /** Every egress surface the apiserver serves, for addresses {@code ours} accepts. */
  static Surfaces egress(KubernetesClient client, Predicate<String> ours) {
    return new Surfaces(client, EnumSet.of(Surface.NAMESPACE_ANNOTATION, Surface.NET_NAMESPACE,
        Surface.OVN_EGRESS_IP, Surface.HOST_SUBNET_IPS, Surface.HOST_SUBNET_CIDRS), null, ours);
  }

  /** Services' ingress in {@code ns}. */
  static Surfaces vip(KubernetesClient client, String ns, Predicate<String> ours) {
    return new Surfaces(client, EnumSet.of(Surface.SERVICE_INGRESS), ns, ours);
  }

  /** The egress surfaces and the Services' ingress in {@code ns} (one operator running both controllers). */
  static Surfaces egressAndVip(KubernetesClient client, String ns, Predicate<String> ours) {
    return new Surfaces(client, EnumSet.of(Surface.NAMESPACE_ANNOTATION, Surface.NET_NAMESPACE,
        Surface.OVN_EGRESS_IP, Surface.HOST_SUBNET_IPS, Surface.HOST_SUBNET_CIDRS, Surface.SERVICE_INGRESS), ns, ours);
  }

  /** The surfaces of one controller's runs: egressip, vip (Services in {@code ns}) or keepalived (groups in it). */
  static Surfaces forController(KubernetesClient client, String controller, String ns, String range) {
    Predicate<String> ours = v -> v.startsWith(range);
    return switch (controller) {
      case "egressip" -> egress(client, ours);
      case "vip" -> vip(client, ns, ours);
      case "keepalived" -> keepalived(client, ns, ours);
      default -> throw new IllegalArgumentException(controller);
    };
  }

  /** The keepalived groups' rendered configurations in {@code ns}. */
  static Surfaces keepalived(KubernetesClient client, String ns, Predicate<String> ours) {
    return new Surfaces(client, EnumSet.of(Surface.KEEPALIVED_CONFIG), ns, ours);
  }

  /**
   * Also reads the ledger at the snapshot's revision, so that {@link SnapshotCheck} can check that every address
   * an owner shows is held in the ledger by that owner (released only after every surface is clear).
   */
  Surfaces withLedger() {
    ledger = true;
    return this;
  }

  boolean readsLedger() {
    return ledger;
  }

  Set<Surface> watched() {
    return watched;
  }

  /** One line for the test's output: which surfaces this run watches. */
  String describe(String run) {
    return "[surfaces] " + run + " watches " + watched.stream().map(Surface::toString)
        .collect(Collectors.joining(", ")) + (ledger ? "; and the ledger at the same revision" : "");
  }

  /** One snapshot of every watched surface, at one etcd revision. */
  List<Entry> read() {
    // The first LIST fixes the revision; namespaces are listed by every egress run, Services by the vip runs.
    String revision;
    List<Entry> out = new ArrayList<>();
    if (watched.contains(Surface.NAMESPACE_ANNOTATION)) {
      var list = client.namespaces().list();
      revision = list.getMetadata().getResourceVersion();
      annotations(list.getItems(), out);
    } else if (watched.contains(Surface.SERVICE_INGRESS)) {
      var list = client.services().inNamespace(serviceNamespace).list();
      revision = list.getMetadata().getResourceVersion();
      ingress(list.getItems(), out);
    } else {
      var list = configMaps(new ListOptions());
      revision = list.getMetadata().getResourceVersion();
      keepalivedConfigs(list.getItems(), out);
    }
    ListOptions at = new ListOptionsBuilder().withResourceVersion(revision).withResourceVersionMatch("Exact").build();
    List<CompletableFuture<List<Entry>>> rest = new ArrayList<>();
    if (watched.contains(Surface.NAMESPACE_ANNOTATION) && watched.contains(Surface.SERVICE_INGRESS)) {
      rest.add(at(() -> ingress(client.services().inNamespace(serviceNamespace).list(at).getItems(), new ArrayList<>())));
    }
    if (watched.contains(Surface.NET_NAMESPACE)) {
      rest.add(at(() -> netNamespaces(client.resources(NetNamespace.class).list(at).getItems())));
    }
    if (watched.contains(Surface.HOST_SUBNET_IPS)) {
      rest.add(at(() -> hostSubnets(client.resources(HostSubnet.class).list(at).getItems())));
    }
    if (watched.contains(Surface.OVN_EGRESS_IP)) {
      rest.add(at(() -> ovnEgressIps(client.genericKubernetesResources(OVN_EGRESS_IP).list(at).getItems())));
    }
    if (ledger) {
      rest.add(at(() -> ledger(client.resources(IPClaim.class).list(at).getItems(),
          client.resources(IPBlock.class).list(at).getItems())));
    }
    for (CompletableFuture<List<Entry>> f : rest) {
      out.addAll(f.join());
    }
    return out.stream().filter(e -> ours.test(e.value())).toList();
  }

  private CompletableFuture<List<Entry>> at(java.util.function.Supplier<List<Entry>> read) {
    return CompletableFuture.supplyAsync(read, pool);
  }

  private KubernetesResourceList<ConfigMap> configMaps(ListOptions options) {
    options.setLabelSelector(KeepalivedAnnotations.GROUP_LABEL);
    return client.configMaps().inNamespace(serviceNamespace).list(options);
  }

  private static List<Entry> annotations(List<Namespace> items, List<Entry> out) {
    for (Namespace n : items) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
      if (ips != null && !ips.isBlank()) {
        for (String ip : ips.split(",")) {
          out.add(new Entry(Surface.NAMESPACE_ANNOTATION, "namespace " + n.getMetadata().getName(), ip.trim()));
        }
      }
    }
    return out;
  }

  private static List<Entry> ingress(List<Service> items, List<Entry> out) {
    for (Service s : items) {
      if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null) {
        for (LoadBalancerIngress i : s.getStatus().getLoadBalancer().getIngress()) {
          if (i.getIp() != null) {
            out.add(new Entry(Surface.SERVICE_INGRESS, "Service " + s.getMetadata().getNamespace() + "/"
                + s.getMetadata().getName(), i.getIp()));
          }
        }
      }
    }
    return out;
  }

  private static List<Entry> ledger(List<IPClaim> claims, List<IPBlock> blocks) {
    List<Entry> out = new ArrayList<>();
    for (IPClaim c : claims) {
      if (c.getSpec() != null && c.getSpec().owner() != null) {
        out.add(new Entry(Surface.LEDGER, holder(c.getSpec().owner()), c.getSpec().address()));
      }
    }
    for (IPBlock b : blocks) {
      if (b.getSpec() != null && b.getSpec().entries() != null) {
        b.getSpec().entries().forEach((ip, e) -> out.add(new Entry(Surface.LEDGER, holder(e.owner()), ip)));
      }
    }
    return out;
  }

  /** The holder text an owner surface uses for a ledger owner. */
  private static String holder(ClaimOwner o) {
    return switch (o.kind()) {
      case "Namespace" -> "namespace " + o.name();
      case "Service" -> "Service " + o.namespace() + "/" + o.name();
      default -> o.kind() + " " + (o.namespace() == null ? "" : o.namespace() + "/") + o.name();
    };
  }

  private static List<Entry> netNamespaces(List<NetNamespace> items) {
    List<Entry> out = new ArrayList<>();
    for (NetNamespace n : items) {
      for (String ip : n.getEgressIPs() == null ? List.<String>of() : n.getEgressIPs()) {
        out.add(new Entry(Surface.NET_NAMESPACE, "namespace " + n.getMetadata().getName(), ip));
      }
    }
    return out;
  }

  private static List<Entry> hostSubnets(List<HostSubnet> items) {
    List<Entry> out = new ArrayList<>();
    for (HostSubnet h : items) {
      for (String ip : h.getEgressIPs() == null ? List.<String>of() : h.getEgressIPs()) {
        out.add(new Entry(Surface.HOST_SUBNET_IPS, "node " + h.getMetadata().getName(), ip));
      }
      for (String cidr : h.getEgressCIDRs() == null ? List.<String>of() : h.getEgressCIDRs()) {
        out.add(new Entry(Surface.HOST_SUBNET_CIDRS, "node " + h.getMetadata().getName(), cidr));
      }
    }
    return out;
  }

  /** The holder of an OVN EgressIP: the namespace its selector names by name, else the one its name says. */
  @SuppressWarnings("unchecked")
  private static List<Entry> ovnEgressIps(List<GenericKubernetesResource> items) {
    List<Entry> out = new ArrayList<>();
    for (GenericKubernetesResource e : items) {
      Map<String, Object> spec = e.getAdditionalProperties().get("spec") instanceof Map<?, ?> m
          ? (Map<String, Object>) m : Map.of();
      String ns = null;
      if (spec.get("namespaceSelector") instanceof Map<?, ?> sel && sel.get("matchLabels") instanceof Map<?, ?> ml) {
        ns = (String) ml.get("kubernetes.io/metadata.name");
      }
      if (ns == null) {
        String name = e.getMetadata().getName();
        ns = name.startsWith("egressipam-") ? name.substring("egressipam-".length()) : "EgressIP " + name;
      }
      if (spec.get("egressIPs") instanceof List<?> ips) {
        for (Object ip : ips) {
          out.add(new Entry(Surface.OVN_EGRESS_IP, ns.startsWith("EgressIP ") ? ns : "namespace " + ns,
              String.valueOf(ip)));
        }
      }
    }
    return out;
  }

  /** The VIPs of each group's rendered keepalived.conf (every node's key), holder = the group. */
  private static List<Entry> keepalivedConfigs(List<ConfigMap> items, List<Entry> out) {
    for (ConfigMap c : items) {
      String group = "KeepalivedGroup " + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName();
      Set<String> vips = new java.util.TreeSet<>();
      for (String conf : c.getData() == null ? List.<String>of() : c.getData().values()) {
        vips.addAll(vips(conf));
      }
      vips.forEach(v -> out.add(new Entry(Surface.KEEPALIVED_CONFIG, group, v)));
    }
    return out;
  }

  /** The addresses inside {@code virtual_ipaddress} and {@code virtual_ipaddress_excluded} blocks. */
  static List<String> vips(String conf) {
    return org.ipamoperators.keepalived.config.VipHandover.rendered(Map.of("", conf)).stream()
        .map(Object::toString).toList();
  }

  /** The owner-to-addresses view of an {@link SnapshotCheck}'s owner check, from the owner surfaces. */
  static Map<String, List<String>> byOwner(List<Entry> entries) {
    return entries.stream().filter(e -> e.surface().ownerSurface()).collect(Collectors.groupingBy(Entry::holder,
        Collectors.collectingAndThen(Collectors.mapping(Entry::value, Collectors.toCollection(java.util.TreeSet::new)),
            List::copyOf)));
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
