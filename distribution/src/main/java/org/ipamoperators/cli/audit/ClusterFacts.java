package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.audit.LedgerEntry;
import org.ipamoperators.core.audit.Publication;
import org.ipamoperators.core.audit.Resource;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.vip.VipServices;
import org.ipamoperators.vip.VipSettings;
import org.ipamoperators.vip.api.VipAnnotations;

/**
 * Reads, straight from the API server (no cache), both sides of the audit: the ledgers (IPClaims, the
 * entries of IPBlocks, and IDClaims; an address held by an IPBlock entry and an IPClaim at once, as a
 * process killed between its write and its check may leave it, is claimed twice) and every place the suite's controllers publish what they hold: egress IPs on namespaces,
 * NetNamespaces and OVN EgressIPs, VIPs in Services' ingress, router ids in KeepalivedGroup status.
 * An owner or a publication is named the way the ledgers name owners ({@code controller/Kind/ns/name}),
 * so that the checker compares like with like.
 */
public final class ClusterFacts {
  static final ResourceDefinitionContext NET_NAMESPACE = new ResourceDefinitionContext.Builder()
      .withGroup("network.openshift.io").withVersion("v1").withKind("NetNamespace").withPlural("netnamespaces")
      .withNamespaced(false).build();
  static final ResourceDefinitionContext OVN_EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips")
      .withNamespaced(false).build();
  static final String OVN_NAME_PREFIX = "egressipam-";
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

  private final List<LedgerEntry> entries = new ArrayList<>();
  private final List<Publication> publications = new ArrayList<>();
  private final Map<LedgerEntry, HasMetadata> claimObjects = new HashMap<>();
  private final Map<LedgerEntry, String> blockAddresses = new HashMap<>();
  private final Map<Publication, HasMetadata> publishers = new HashMap<>();
  private final List<String> unreadable = new ArrayList<>();
  private final List<Eip> eips = new ArrayList<>();
  private AuditProgress progress = AuditProgress.NONE;
  private boolean vipUnclassed = true;

  private ClusterFacts() {}

  public List<LedgerEntry> entries() {
    return entries;
  }

  public List<Publication> publications() {
    return publications;
  }

  /** The claim object behind a ledger entry, for a repair guarded by its resourceVersion. */
  public HasMetadata claimObject(LedgerEntry e) {
    return claimObjects.get(e);
  }

  /**
   * The address of a ledger entry that is an IPBlock entry (its {@link #claimObject} is the block),
   * or null for a claim object of its own: a repair removes only that entry, not the block.
   */
  public String blockAddress(LedgerEntry e) {
    return blockAddresses.get(e);
  }

  /** The object that shows a publication, for an Event on it. */
  public HasMetadata publisher(Publication p) {
    return publishers.get(p);
  }

  /** The Eips read (empty unless eip is audited), for the audit of their addresses in EC2. */
  public List<Eip> eips() {
    return eips;
  }

  /** Optional kinds that are not served here (no OpenShift SDN, no OVN): said in the report, not an error. */
  public List<String> notServed() {
    return unreadable;
  }

  /** The owner name the audit uses on both sides. */
  public static String key(ClaimOwner o) {
    return o.controller() + "/" + o.kind() + "/" + (o.namespace() == null ? "" : o.namespace() + "/") + o.name();
  }

  /** The controllers whose ledgers and publications an audit can read. */
  public static final Set<String> ALL = Set.of("egressip", "vip", "keepalived", "eip");

  /** Everything, as {@code ipam audit} run by a cluster administrator reads it. */
  public static ClusterFacts read(KubernetesClient client) {
    return read(client, ALL);
  }

  /**
   * The claims and publications of the given controllers only: an operator running some controllers
   * reads only what its RBAC lets those controllers read.
   */
  public static ClusterFacts read(KubernetesClient client, Set<String> controllers) {
    return read(client, controllers, AuditProgress.NONE);
  }

  /**
   * As {@link #read(KubernetesClient, Set)}, telling {@code progress} of each list read; unclassed LoadBalancer
   * Services are vip's unless {@code IPAM_VIP_HANDLE_UNCLASSED} is false.
   */
  public static ClusterFacts read(KubernetesClient client, Set<String> controllers, AuditProgress progress) {
    return read(client, controllers, progress,
        VipSettings.handleUnclassed(System.getenv(VipSettings.HANDLE_UNCLASSED)));
  }

  /** As {@link #read(KubernetesClient, Set, AuditProgress)}, unclassed Services vip's when {@code vipUnclassed}. */
  public static ClusterFacts read(KubernetesClient client, Set<String> controllers, AuditProgress progress,
      boolean vipUnclassed) {
    ClusterFacts f = new ClusterFacts();
    f.progress = progress;
    f.vipUnclassed = vipUnclassed;
    Owners owners = readOwners(f, client, controllers);
    f.eips.addAll(owners.eips());
    boolean ipLedger = controllers.contains("egressip") || controllers.contains("vip") || controllers.contains("eip");
    Map<String, IPClaim> claimByAddress = ipLedger ? ipClaims(f, client, controllers, owners) : Map.of();
    if (ipLedger) {
      ipBlocks(f, client, controllers, owners);
    }
    if (controllers.contains("keepalived")) {
      idClaims(f, client, owners);
    }
    if (controllers.contains("egressip")) {
      egress(f, client, owners.namespaces());
    }
    vip(f, owners.services(), claimByAddress);
    eipStatuses(f, owners.eips());
    keepalived(f, owners.groups(), metricsPorts(client, owners.groups()));
    return f;
  }

  /** The objects that own claims, of the controllers audited (empty lists for the others). */
  private static Owners readOwners(ClusterFacts f, KubernetesClient client, Set<String> controllers) {
    List<Namespace> namespaces = controllers.contains("egressip")
        ? listed(f, "Namespace", client.namespaces().list().getItems()) : List.of();
    List<Service> services = controllers.contains("vip")
        ? listed(f, "Service", client.services().inAnyNamespace().list().getItems()) : List.of();
    List<KeepalivedGroup> groups = controllers.contains("keepalived") ? listOrEmpty(f, "KeepalivedGroup",
        () -> client.resources(KeepalivedGroup.class).inAnyNamespace().list().getItems()) : List.of();
    List<Eip> eips = controllers.contains("eip") ? listOrEmpty(f, "Eip",
        () -> client.resources(Eip.class).inAnyNamespace().list().getItems()) : List.of();
    return Owners.of(namespaces, services, groups, eips);
  }

  /** Each IPClaim of the audited controllers as a ledger entry; returns the claims by canonical address. */
  private static Map<String, IPClaim> ipClaims(ClusterFacts f, KubernetesClient client, Set<String> controllers,
      Owners owners) {
    Map<String, IPClaim> claimByAddress = new HashMap<>();
    for (IPClaim c : listed(f, "IPClaim", client.resources(IPClaim.class).list().getItems())) {
      if (c.getSpec() == null || c.getSpec().owner() == null) {
        continue; // refused by the CRD's schema; nothing to compare
      }
      if (!controllers.contains(c.getSpec().owner().controller())) {
        continue; // another controller's claim: audited where that controller runs
      }
      String address = canonical(c.getSpec().address());
      if (address == null) {
        continue;
      }
      claimByAddress.put(address, c);
      ClaimOwner o = c.getSpec().owner();
      boolean exists = "Eip".equals(o.kind()) ? owners.eipExists(o) : owners.exists(o, c);
      LedgerEntry e = new LedgerEntry(Resource.ip(address), key(o), "IPClaim " + c.getMetadata().getName(),
          created(c), exists);
      f.entries.add(e);
      f.claimObjects.put(e, c);
    }
    return claimByAddress;
  }

  /** Each entry of every IPBlock, of the audited controllers, as a ledger entry. */
  private static void ipBlocks(ClusterFacts f, KubernetesClient client, Set<String> controllers, Owners owners) {
    for (IPBlock b : listOrEmpty(f, "IPBlock", () -> client.resources(IPBlock.class).list().getItems())) {
      for (var entry : b.entries().entrySet()) {
        IPBlockEntry be = entry.getValue();
        String address = canonical(entry.getKey());
        if (be == null || be.owner() == null || address == null || !controllers.contains(be.owner().controller())) {
          continue;
        }
        LedgerEntry e = new LedgerEntry(Resource.ip(address), key(be.owner()),
            "IPBlock " + b.getMetadata().getName() + " entry " + address, entrySince(be, created(b)),
            owners.exists(be.owner(), b));
        f.entries.add(e);
        f.claimObjects.put(e, b);
        f.blockAddresses.put(e, entry.getKey());
      }
    }
  }

  /** When a block entry was written: its own time, else (none, or unreadable) the block's. */
  static Instant entrySince(IPBlockEntry entry, Instant blockCreated) {
    if (entry.since() == null) {
      return blockCreated;
    }
    try {
      return Instant.parse(entry.since());
    } catch (RuntimeException x) {
      return blockCreated; // the block's age stands in for an unreadable entry time
    }
  }

  private static void idClaims(ClusterFacts f, KubernetesClient client, Owners owners) {
    for (IDClaim c : listed(f, "IDClaim", client.resources(IDClaim.class).list().getItems())) {
      if (c.getSpec() == null || c.getSpec().owner() == null) {
        continue;
      }
      ClaimOwner o = c.getSpec().owner();
      // A retired number is held on purpose while nodes forget it: its age counts from retirement.
      Instant since = ClusterIdLedger.retiredAt(c).orElse(created(c));
      LedgerEntry e = new LedgerEntry(new Resource(c.getSpec().space(), Integer.toString(c.getSpec().id())), key(o),
          "IDClaim " + c.getMetadata().getName(), since, owners.exists(o, c));
      f.entries.add(e);
      f.claimObjects.put(e, c);
    }
  }

  private static void eipStatuses(ClusterFacts f, List<Eip> eips) {
    for (Eip e : eips) {
      if (e.getStatus() != null && e.getStatus().publicIpAddress() != null) {
        String name = e.getMetadata().getNamespace() + "/" + e.getMetadata().getName();
        addAll(f, e, List.of(e.getStatus().publicIpAddress()), "eip/Eip/" + name, "Eip " + name + " status.publicIpAddress");
      }
    }
  }

  private static void egress(ClusterFacts f, KubernetesClient client, List<Namespace> nsList) {
    for (Namespace n : nsList) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
      String holder = "egressip/Namespace/" + n.getMetadata().getName();
      addAll(f, n, ips == null ? List.of() : List.of(ips.split(",")), holder,
          "Namespace " + n.getMetadata().getName() + " annotation " + EgressAnnotations.EGRESSIPS);
    }
    for (GenericKubernetesResource nn : listOrEmpty(f, "NetNamespace",
        () -> client.genericKubernetesResources(NET_NAMESPACE).list().getItems())) {
      Object ips = nn.getAdditionalProperties().get("egressIPs");
      addAll(f, nn, strings(ips), "egressip/Namespace/" + nn.getMetadata().getName(),
          "NetNamespace " + nn.getMetadata().getName() + " egressIPs");
    }
    for (GenericKubernetesResource e : listOrEmpty(f, "EgressIP",
        () -> client.genericKubernetesResources(OVN_EGRESS_IP).withLabel(EgressAnnotations.MANAGED_BY).list().getItems())) {
      String name = e.getMetadata().getName();
      if (!name.startsWith(OVN_NAME_PREFIX) || !(e.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec)) {
        continue;
      }
      addAll(f, e, strings(spec.get("egressIPs")), "egressip/Namespace/" + name.substring(OVN_NAME_PREFIX.length()),
          "EgressIP " + name + " spec.egressIPs");
    }
  }

  private static void vip(ClusterFacts f, List<Service> services, Map<String, IPClaim> claimByAddress) {
    for (Service s : services) {
      if (!VipServices.handles(s, f.vipUnclassed) && !VipServices.hasFinalizer(s)) {
        continue; // another load balancer's Service: not ours to audit
      }
      if (s.getStatus() == null || s.getStatus().getLoadBalancer() == null
          || s.getStatus().getLoadBalancer().getIngress() == null) {
        continue;
      }
      String name = s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
      for (LoadBalancerIngress in : s.getStatus().getLoadBalancer().getIngress()) {
        String ip = canonical(in.getIp());
        if (ip == null) {
          continue;
        }
        // A shared address is held by its sharing key; a Service listed on that claim shows it for the key.
        IPClaim c = claimByAddress.get(ip);
        String holder = "vip/Service/" + name;
        if (c != null && "SharingKey".equals(c.getSpec().owner().kind()) && listsMember(c, name)) {
          holder = key(c.getSpec().owner());
        }
        Publication p = new Publication(Resource.ip(ip), holder, "Service " + name + " status.loadBalancer.ingress");
        f.publications.add(p);
        f.publishers.put(p, s);
      }
    }
  }

  /**
   * Each group's metrics host port, by "namespace/group": published in its DaemonSet (the reloader's port named
   * {@code metrics}), not in the group's status. Read per namespace of a group, which the controller's own RBAC allows.
   */
  private static Map<String, Integer> metricsPorts(KubernetesClient client, List<KeepalivedGroup> groups) {
    Map<String, Integer> ports = new HashMap<>();
    Set<String> namespaces = new java.util.TreeSet<>();
    groups.forEach(g -> namespaces.add(g.getMetadata().getNamespace()));
    for (String ns : namespaces) {
      for (var ds : client.apps().daemonSets().inNamespace(ns).withLabel(KeepalivedAnnotations.GROUP_LABEL).list()
          .getItems()) {
        String group = ds.getMetadata().getLabels().get(KeepalivedAnnotations.GROUP_LABEL);
        var pod = ds.getSpec() == null || ds.getSpec().getTemplate() == null ? null : ds.getSpec().getTemplate().getSpec();
        if (pod == null || pod.getContainers() == null) {
          continue;
        }
        pod.getContainers().stream().filter(c -> c.getPorts() != null).flatMap(c -> c.getPorts().stream())
            .filter(port -> "metrics".equals(port.getName()) && port.getContainerPort() != null).findFirst()
            .ifPresent(port -> ports.put(ns + "/" + group, port.getContainerPort()));
      }
    }
    return ports;
  }

  private static void keepalived(ClusterFacts f, List<KeepalivedGroup> groups, Map<String, Integer> metricsPorts) {
    for (KeepalivedGroup g : groups) {
      String group = g.getMetadata().getNamespace() + "/" + g.getMetadata().getName();
      Integer port = metricsPorts.get(group);
      if (port != null) {
        Publication p = new Publication(new Resource(KeepalivedSettings.METRICS_PORT_SPACE, Integer.toString(port)),
            "keepalived/KeepalivedGroup/" + group, "DaemonSet " + group + " metrics port");
        f.publications.add(p);
        f.publishers.put(p, g);
      }
      if (g.getStatus() == null || g.getStatus().routerIDs() == null) {
        continue;
      }
      String space = g.getStatus().routerIDSpace() != null ? g.getStatus().routerIDSpace()
          : org.ipamoperators.controller.common.ids.IdSpace.vrrpRouterIds(g.getSpec().routerIdSpaceOrDefault()).name();
      String holder = "keepalived/KeepalivedGroup/" + g.getMetadata().getNamespace() + "/" + g.getMetadata().getName();
      for (Integer id : new HashSet<>(g.getStatus().routerIDs().values())) {
        Publication p = new Publication(new Resource(space, Integer.toString(id)), holder, "KeepalivedGroup "
            + g.getMetadata().getNamespace() + "/" + g.getMetadata().getName() + " status.routerIDs");
        f.publications.add(p);
        f.publishers.put(p, g);
      }
    }
  }

  static boolean listsMember(IPClaim c, String service) {
    Map<String, String> a = c.getMetadata().getAnnotations();
    String members = a == null ? null : a.get(VipAnnotations.SHARING_MEMBERS);
    if (members == null || members.isBlank()) {
      return false;
    }
    try {
      for (com.fasterxml.jackson.databind.JsonNode m : JSON.readTree(members)) {
        if (service.equals(m.path("service").asText())) {
          return true;
        }
      }
    } catch (java.io.IOException e) {
      return false; // a garbled member list: the Service is audited as its own holder
    }
    return false;
  }

  private static void addAll(ClusterFacts f, HasMetadata on, List<String> ips, String holder, String where) {
    for (String raw : ips) {
      String ip = canonical(raw.trim());
      if (ip != null) {
        Publication p = new Publication(Resource.ip(ip), holder, where);
        f.publications.add(p);
        f.publishers.put(p, on);
      }
    }
  }

  private static List<String> strings(Object o) {
    List<String> out = new ArrayList<>();
    if (o instanceof List<?> l) {
      l.forEach(x -> { if (x != null) { out.add(x.toString()); } });
    }
    return out;
  }

  private static String canonical(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return Ip.parse(text.trim()).toString();
    } catch (RuntimeException e) {
      return null; // not an address: the controller concerned reports it on its object
    }
  }

  private static Instant created(HasMetadata o) {
    String t = o.getMetadata().getCreationTimestamp();
    return t == null ? null : Instant.parse(t);
  }

  /** A list read, told to the progress. */
  private static <T> List<T> listed(ClusterFacts f, String kind, List<T> items) {
    f.progress.read(kind, items.size());
    return items;
  }

  private interface Lister<T> {
    List<T> list();
  }

  private static <T> List<T> listOrEmpty(ClusterFacts f, String kind, Lister<T> lister) {
    List<T> items;
    try {
      items = lister.list();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        f.unreadable.add(kind);
        return List.of();
      }
      throw e;
    }
    return listed(f, kind, items);
  }
}
