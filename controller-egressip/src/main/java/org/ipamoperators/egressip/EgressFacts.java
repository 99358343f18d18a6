package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.network.SdnWriter;
import org.ipamoperators.egressip.plan.ClaimFact;
import org.ipamoperators.egressip.plan.EgressInputs;
import org.ipamoperators.egressip.plan.NamespaceState;
import org.ipamoperators.egressip.plan.NodeFacts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster objects as the egress policy reads them: namespaces, nodes and claims (IPClaims, and the
 * entries of IPBlocks, which hold this controller's allocations since block claims) turned into the
 * planner's facts. One place for it, because the reconciler and {@code ipam plan} must read a
 * cluster the same way to decide the same (the planner itself is {@link
 * org.ipamoperators.egressip.plan.EgressPolicy}).
 */
public final class EgressFacts {
  private static final Logger LOG = LoggerFactory.getLogger(EgressFacts.class);
  /** The label older versions wrote on a claim once published; still read, no longer written. */
  public static final String LABEL_PUBLISHED = "ipam.ipamoperators.org/published";

  private EgressFacts() {}

  public static Map<String, String> annotations(HasMetadata o) {
    return o.getMetadata().getAnnotations() == null ? Map.of() : o.getMetadata().getAnnotations();
  }

  public static Map<String, String> labels(HasMetadata o) {
    return o.getMetadata().getLabels() == null ? Map.of() : o.getMetadata().getLabels();
  }

  /** The addresses a namespace's egressips annotation names (entries that are not addresses left out). */
  public static Set<Ip> annotatedAddresses(Namespace ns) {
    return addresses(annotations(ns).get(EgressAnnotations.EGRESSIPS) == null ? List.of()
        : List.of(annotations(ns).get(EgressAnnotations.EGRESSIPS).split(",")));
  }

  /** The addresses an OVN-Kubernetes EgressIP's {@code spec.egressIPs} names. */
  public static Set<Ip> egressIpAddresses(io.fabric8.kubernetes.api.model.GenericKubernetesResource e) {
    Object spec = e.getAdditionalProperties().get("spec");
    Object ips = spec instanceof Map<?, ?> m ? m.get("egressIPs") : null;
    return ips instanceof List<?> l ? addresses(l.stream().map(String::valueOf).toList()) : Set.of();
  }

  private static Set<Ip> addresses(List<String> texts) {
    Set<Ip> out = new HashSet<>();
    for (String t : texts) {
      try {
        out.add(Ip.parse(t.trim()));
      } catch (IllegalArgumentException e) {
        // not an address: shows nothing
      }
    }
    return out;
  }

  /** Whether a namespace opts in to the named EgressIPAM. */
  public static boolean optsIn(Namespace ns, String ipam) {
    return ipam.equals(annotations(ns).get(EgressAnnotations.EGRESSIPAM));
  }

  /** An opted-in namespace as the planner sees it (only namespaces not being deleted are planned). */
  public static NamespaceState namespace(Namespace ns) {
    Map<String, String> a = annotations(ns);
    return new NamespaceState(ns.getMetadata().getName(), ns.getMetadata().getUid(),
        a.get(EgressAnnotations.EGRESSIPS), a.get(EgressAnnotations.EGRESSIPS_PUBLISHED));
  }

  /**
   * A node as the planner sees it.
   *
   * @param hostIp the node's SDN host address (OpenShift SDN's HostSubnet), or null
   * @param sdnHosting the egress IPs SDN says the node hosts
   * @param cloud what the cloud said of the node's interface, or null when it was not asked
   */
  public static NodeFacts node(Node n, Ip hostIp, Set<Ip> sdnHosting, NodeFacts.CloudView cloud) {
    return new NodeFacts(n.getMetadata().getName(), labels(n), annotations(n).get(EgressAnnotations.NODE_CAPACITY),
        readiness(n), ownAddresses(n, hostIp), sdnHosting, providerId(n) != null, cloud);
  }

  public static String providerId(Node n) {
    return n.getSpec() == null ? null : n.getSpec().getProviderID();
  }

  /** The node's InternalIP and ExternalIP addresses, plus its SDN host address: never handed out. */
  public static Set<Ip> ownAddresses(Node n, Ip hostIp) {
    Set<Ip> out = new HashSet<>();
    if (n.getStatus() != null && n.getStatus().getAddresses() != null) {
      for (NodeAddress a : n.getStatus().getAddresses()) {
        if ("InternalIP".equals(a.getType()) || "ExternalIP".equals(a.getType())) {
          try {
            out.add(Ip.parse(a.getAddress()));
          } catch (RuntimeException e) {
            // a host name or garbage: nothing to protect
          }
        }
      }
    }
    if (hostIp != null) {
      out.add(hostIp);
    }
    return out;
  }

  /** The node's latest Ready condition; a node without one (just registered) is not ready. */
  public static HealthObservation readiness(Node n) {
    List<NodeCondition> conditions = n.getStatus() == null || n.getStatus().getConditions() == null
        ? List.of() : n.getStatus().getConditions();
    for (NodeCondition c : conditions) {
      if ("Ready".equals(c.getType())) {
        Instant at = c.getLastTransitionTime() == null ? Instant.EPOCH : Instant.parse(c.getLastTransitionTime());
        return new HealthObservation(n.getMetadata().getName(), at, "True".equals(c.getStatus()));
      }
    }
    return new HealthObservation(n.getMetadata().getName(), Instant.EPOCH, false);
  }

  /** A ledger claim as a fact, or null (logged) when it has no owner or no parsable address. */
  public static ClaimFact claim(IPClaim c) {
    if (c.getSpec() == null || c.getSpec().owner() == null) {
      LOG.warn("IPClaim {} has no spec or owner; it is ignored", c.getMetadata().getName());
      return null;
    }
    Ip ip;
    try {
      ip = Ip.parse(c.getSpec().address());
    } catch (RuntimeException e) {
      LOG.warn("IPClaim {} holds '{}', which is not an address; it is ignored", c.getMetadata().getName(),
          c.getSpec().address());
      return null;
    }
    Instant created = c.getMetadata().getCreationTimestamp() == null ? null
        : Instant.parse(c.getMetadata().getCreationTimestamp());
    return new ClaimFact(ip, c.getSpec().pool(), c.getSpec().owner().name(), c.getSpec().owner().describe(),
        "true".equals(labels(c).get(LABEL_PUBLISHED)), created);
  }

  /**
   * A block's entries as facts (never published by label: the namespace's record says what was
   * published). An entry whose address does not parse, or that has no owner, is logged and skipped.
   */
  public static List<ClaimFact> claims(IPBlock b) {
    List<ClaimFact> out = new java.util.ArrayList<>(b.entries().size());
    b.entries().forEach((address, e) -> {
      if (e == null || e.owner() == null) {
        LOG.warn("IPBlock {} has an entry for '{}' without owner; it is ignored", b.getMetadata().getName(), address);
        return;
      }
      Ip ip;
      try {
        ip = Ip.parse(address);
      } catch (RuntimeException x) {
        LOG.warn("IPBlock {} has an entry '{}', which is not an address; it is ignored", b.getMetadata().getName(),
            address);
        return;
      }
      Instant since;
      try {
        since = e.since() == null ? null : Instant.parse(e.since());
      } catch (RuntimeException x) {
        since = null;
      }
      out.add(new ClaimFact(ip, e.pool(), e.owner().name(), e.owner().describe(), false, since));
    });
    return out;
  }

  /** {@link #inputs(EgressIPAM, Collection, Collection, Collection, Collection, Collection)} without blocks. */
  public static EgressInputs inputs(EgressIPAM ipam, Collection<Namespace> namespaces, Collection<Node> nodes,
      Collection<IPClaim> claims, Collection<HostSubnet> subnets) {
    return inputs(ipam, namespaces, nodes, claims, List.of(), subnets);
  }

  /**
   * The inputs of one decision about an EgressIPAM from a set of cluster objects, on a platform
   * that needs no cloud API (nothing to describe, no foreign addresses to list): what {@code ipam
   * plan} decides from a file of objects, read exactly as the reconciler reads the cluster.
   */
  public static EgressInputs inputs(EgressIPAM ipam, Collection<Namespace> namespaces, Collection<Node> nodes,
      Collection<IPClaim> claims, Collection<IPBlock> blocks, Collection<HostSubnet> subnets) {
    String name = ipam.getMetadata().getName();
    List<NamespaceState> wanting = namespaces.stream()
        .filter(ns -> optsIn(ns, name) && ns.getMetadata().getDeletionTimestamp() == null)
        .map(EgressFacts::namespace).toList();
    List<ClaimFact> facts = new java.util.ArrayList<>(claims.stream().map(EgressFacts::claim).filter(Objects::nonNull)
        .toList());
    blocks.forEach(b -> facts.addAll(claims(b)));
    Map<String, Set<Ip>> hosting = SdnWriter.hosting(subnets);
    Map<String, Ip> hostIps = SdnWriter.hostIps(subnets);
    List<NodeFacts> nodeFacts = nodes.stream().map(n -> node(n, hostIps.get(n.getMetadata().getName()),
        hosting.getOrDefault(n.getMetadata().getName(), Set.of()), null)).toList();
    return new EgressInputs(name, ipam.getSpec(), wanting, facts, nodeFacts, EgressInputs.PlatformNetwork.BARE_METAL,
        Map.of());
  }
}
