package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPBlockSpec;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.egressip.api.EgressAnnotations;

/**
 * The fields the egress controller reads, and only those, as the informers keep them: a namespace
 * is its name, uid and our three annotations (not its labels, managedFields, spec or status); a
 * node its labels, three annotations, providerID, Ready condition and addresses (not its images or
 * managedFields). At 10,000 namespaces and real nodes this is most of the operator's heap.
 * Nothing trimmed is ever written back whole: writes are merge patches of the fields we own.
 */
final class Trimmed {
  private Trimmed() {}

  private static ObjectMeta meta(ObjectMeta m, Map<String, String> annotations, Map<String, String> labels,
      boolean created) {
    ObjectMeta out = new ObjectMeta();
    out.setName(intern(m.getName())); // a namespace's name is also its NetNamespace's and its claims' owner
    out.setNamespace(intern(m.getNamespace()));
    out.setUid(m.getUid());
    out.setResourceVersion(m.getResourceVersion());
    out.setCreationTimestamp(created ? m.getCreationTimestamp() : null);
    out.setDeletionTimestamp(m.getDeletionTimestamp());
    out.setAnnotations(annotations);
    out.setLabels(interned(labels));
    return out;
  }

  private static String intern(String s) {
    return s == null ? null : s.intern();
  }

  /** Keys and values repeated on thousands of objects (label keys, pool names) are kept once. */
  private static Map<String, String> interned(Map<String, String> all) {
    if (all == null) {
      return null;
    }
    Map<String, String> out = new HashMap<>(Math.max(2, all.size() * 2));
    all.forEach((k, v) -> out.put(k.intern(), v == null || v.length() > 63 ? v : v.intern()));
    return out;
  }

  private static Map<String, String> only(Map<String, String> all, String... keys) {
    if (all == null) {
      return null;
    }
    Map<String, String> out = null;
    for (String k : keys) {
      String v = all.get(k);
      if (v != null) {
        if (out == null) {
          out = new HashMap<>(4);
        }
        out.put(k, v); // k is one of our constants
      }
    }
    return out;
  }

  static Namespace namespace(Namespace n) {
    Namespace out = new Namespace();
    out.setMetadata(meta(n.getMetadata(), only(n.getMetadata().getAnnotations(), EgressAnnotations.EGRESSIPAM,
        EgressAnnotations.EGRESSIPS, EgressAnnotations.EGRESSIPS_PUBLISHED), null, false));
    return out;
  }

  static Node node(Node n) {
    Node out = new Node();
    out.setMetadata(meta(n.getMetadata(), only(n.getMetadata().getAnnotations(), EgressAnnotations.NODE_CAPACITY,
        EgressAnnotations.MANAGED_BY, EgressAnnotations.CLOUD_EGRESS_IPCONFIG), n.getMetadata().getLabels(), false));
    if (n.getSpec() != null && n.getSpec().getProviderID() != null) {
      NodeSpec spec = new NodeSpec();
      spec.setProviderID(n.getSpec().getProviderID());
      out.setSpec(spec);
    }
    if (n.getStatus() != null) {
      NodeStatus status = new NodeStatus();
      status.setAddresses(n.getStatus().getAddresses());
      if (n.getStatus().getConditions() != null) {
        status.setConditions(n.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
            .map(c -> {
              var r = new io.fabric8.kubernetes.api.model.NodeCondition();
              r.setType(c.getType());
              r.setStatus(c.getStatus());
              r.setLastTransitionTime(c.getLastTransitionTime());
              return r;
            }).toList());
      }
      out.setStatus(status);
    }
    return out;
  }

  static IPClaim claim(IPClaim c) {
    IPClaim out = new IPClaim();
    out.setMetadata(meta(c.getMetadata(), null, c.getMetadata().getLabels(), true));
    IPClaimSpec spec = c.getSpec();
    ClaimOwner o = spec == null ? null : spec.owner();
    out.setSpec(spec == null ? null : new IPClaimSpec(spec.address(), intern(spec.pool()), o == null ? null
        : new ClaimOwner(intern(o.controller()), intern(o.kind()), intern(o.namespace()), intern(o.name()), o.uid())));
    return out;
  }

  static IPBlock block(IPBlock b) {
    IPBlock out = new IPBlock();
    out.setMetadata(meta(b.getMetadata(), null, null, false));
    Map<String, IPBlockEntry> entries = new java.util.TreeMap<>();
    b.entries().forEach((address, e) -> {
      ClaimOwner o = e.owner();
      entries.put(address, new IPBlockEntry(intern(e.pool()), o == null ? null : new ClaimOwner(intern(o.controller()),
          intern(o.kind()), intern(o.namespace()), intern(o.name()), o.uid()), intern(e.origin()), e.since()));
    });
    out.setSpec(new IPBlockSpec(b.getSpec() == null ? null : b.getSpec().cidr(), entries));
    return out;
  }

  static HostSubnet hostSubnet(HostSubnet h) {
    HostSubnet out = new HostSubnet();
    out.setMetadata(meta(h.getMetadata(), null, null, false));
    out.setHost(h.getHost());
    out.setHostIP(h.getHostIP());
    out.setEgressIPs(h.getEgressIPs());
    out.setEgressCIDRs(h.getEgressCIDRs());
    return out;
  }

  static NetNamespace netNamespace(NetNamespace n) {
    NetNamespace out = new NetNamespace();
    out.setMetadata(meta(n.getMetadata(), null, null, false));
    out.setEgressIPs(n.getEgressIPs());
    return out;
  }

  /**
   * A Node update matters when what the egress policy reads changed: readiness (status or
   * transition), labels, the capacity annotation, addresses, providerID. Heartbeats, images and
   * conditions other than Ready are ignored (review H5).
   */
  static boolean nodeChanged(Node now, Node before) {
    Node a = node(now);
    Node b = node(before);
    return !Objects.equals(a.getMetadata().getLabels(), b.getMetadata().getLabels())
        || !Objects.equals(a.getMetadata().getAnnotations(), b.getMetadata().getAnnotations())
        || !Objects.equals(a.getSpec(), b.getSpec())
        || !Objects.equals(a.getStatus() == null ? null : a.getStatus().getAddresses(),
            b.getStatus() == null ? null : b.getStatus().getAddresses())
        || !Objects.equals(ready(a), ready(b));
  }

  private static List<String> ready(Node n) {
    if (n.getStatus() == null || n.getStatus().getConditions() == null) {
      return List.of();
    }
    return n.getStatus().getConditions().stream().map(c -> c.getStatus() + "@" + c.getLastTransitionTime()).toList();
  }

  /** A Namespace update matters when one of our annotations or its deletion changed. */
  static boolean namespaceChanged(Namespace now, Namespace before) {
    Namespace a = namespace(now);
    Namespace b = namespace(before);
    return !Objects.equals(a.getMetadata().getAnnotations(), b.getMetadata().getAnnotations())
        || !Objects.equals(a.getMetadata().getDeletionTimestamp(), b.getMetadata().getDeletionTimestamp());
  }
}
