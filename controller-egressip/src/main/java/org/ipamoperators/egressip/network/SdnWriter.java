package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.ipamoperators.controller.common.kube.MergePatch;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * Writes an EgressIPAM's decisions to OpenShift SDN: {@code NetNamespace.egressIPs} per namespace and
 * {@code HostSubnet.egressIPs} (explicit mode) or {@code egressCIDRs} (CIDR mode) per node. Only
 * entries inside the IPAM's CIDRs are touched, only objects that change are written, and each
 * object's failure is reported without stopping the others.
 *
 * <p>Reads come from the informers' view (no list or get per pass). Each write is a merge patch
 * carrying the resourceVersion it was computed from: if another EgressIPAM (reconciled in parallel)
 * or anyone else wrote in between, the API server answers 409, and the value is computed again
 * from the fresh object, so another IPAM's addresses are never overwritten with a stale view
 * (review M7).
 *
 * <p>The writes of one step go out together on the given executor (each object is written on its own,
 * so their order within a step does not matter): first every NetNamespace, then every HostSubnet's
 * removals, then every HostSubnet's additions. A pass of 1,000 new namespaces is 1,000 NetNamespace
 * patches, which one after the other were most of its time (docs/benchmarks.md).
 */
public final class SdnWriter {
  private static final int ATTEMPTS = 5;

  private final KubernetesClient client;
  private final Function<String, NetNamespace> netNamespaces;
  private final Supplier<Collection<HostSubnet>> hostSubnets;
  private final Consumer<HasMetadata> wrote;
  private final Consumer<HostSubnet> gone;
  private final Executor executor;

  /** Writing one object after the other, on the caller's thread. */
  public SdnWriter(KubernetesClient client, Function<String, NetNamespace> netNamespaces,
      Supplier<Collection<HostSubnet>> hostSubnets, Consumer<HasMetadata> wrote) {
    this(client, netNamespaces, hostSubnets, wrote, Runnable::run);
  }

  /**
   * @param netNamespaces the NetNamespace of a name as last seen (null: none)
   * @param hostSubnets every HostSubnet as last seen
   * @param wrote told of each object written, as the API server returned it (from the executor's threads)
   * @param executor where the writes of one step run side by side
   */
  public SdnWriter(KubernetesClient client, Function<String, NetNamespace> netNamespaces,
      Supplier<Collection<HostSubnet>> hostSubnets, Consumer<HasMetadata> wrote, Executor executor) {
    this(client, netNamespaces, hostSubnets, wrote, h -> {}, executor);
  }

  /**
   * @param gone told of each HostSubnet (as last seen) that the API server no longer has: its node was
   *     deleted, so it shows nothing any more, whatever a lagging informer still says
   */
  public SdnWriter(KubernetesClient client, Function<String, NetNamespace> netNamespaces,
      Supplier<Collection<HostSubnet>> hostSubnets, Consumer<HasMetadata> wrote, Consumer<HostSubnet> gone,
      Executor executor) {
    this.client = client;
    this.netNamespaces = netNamespaces;
    this.hostSubnets = hostSubnets;
    this.wrote = wrote;
    this.gone = gone;
    this.executor = executor;
  }

  /** Reading straight from the API server (cleanup, tests). */
  public static SdnWriter direct(KubernetesClient client) {
    return new SdnWriter(client, ns -> client.resources(NetNamespace.class).withName(ns).get(),
        () -> client.resources(HostSubnet.class).list().getItems(), o -> {}, h -> {}, Runnable::run);
  }

  /** Applies the write; returns one message per object that could not be written. */
  public List<String> apply(NetworkWrite w) {
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    // Every NetNamespace and HostSubnet entry is asked whether it is ours; the served addresses are,
    // and known by their text, so only the rest (few) are parsed.
    Set<String> served = new HashSet<>();
    w.namespaces().values().forEach(ips -> ips.forEach(ip -> served.add(ip.toString())));
    Predicate<String> ours = text -> served.contains(text) || w.ours(text);
    List<Supplier<Void>> netNamespaceWrites = new ArrayList<>();
    w.namespaces().forEach((ns, ips) -> netNamespaceWrites.add(
        () -> setNetNamespace(ns, ips.stream().map(Ip::toString).toList(), ours, failures)));
    w.cleared().forEach(ns -> netNamespaceWrites.add(() -> setNetNamespace(ns, List.of(), ours, failures)));
    all(netNamespaceWrites, failures);
    // Break before make: every node first lets go of what it no longer hosts, then nodes take what
    // is new, so an address that moves is never on two HostSubnets at once (SDN refuses that). An
    // address a node could not let go of is given to no other node in this pass.
    List<HostSubnet> subnets = new ArrayList<>(hostSubnets.get());
    subnets.sort(java.util.Comparator.comparing(h -> h.getMetadata().getName()));
    Set<String> none = Set.of();
    Set<String> deleted = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<HostSubnet> written = all(subnets.stream()
        .map(hs -> (Supplier<HostSubnet>) () -> setHostSubnet(hs, w, ours, true, none, failures, deleted)).toList(),
        failures);
    Set<String> stuck = new HashSet<>();
    for (int i = 0; i < subnets.size(); i++) {
      // A HostSubnet deleted meanwhile shows nothing: what it showed is free to move; one not written still shows it.
      if (written.get(i) == null && !deleted.contains(subnets.get(i).getMetadata().getName())) {
        stuck.addAll(leaving(subnets.get(i), w, ours));
      }
    }
    all(written.stream().filter(Objects::nonNull)
        .map(hs -> (Supplier<HostSubnet>) () -> setHostSubnet(hs, w, ours, false, stuck, failures, deleted)).toList(),
        failures);
    return new ArrayList<>(failures);
  }

  /** The addresses of ours a HostSubnet shows that its node should no longer host. */
  private static Set<String> leaving(HostSubnet seen, NetworkWrite w, Predicate<String> ours) {
    Set<String> out = new HashSet<>();
    Set<Ip> hosted = w.hosting().getOrDefault(seen.getMetadata().getName(), Set.of());
    for (String ip : seen.getEgressIPs() == null ? List.<String>of() : seen.getEgressIPs()) {
      if (ours.test(ip) && hosted.stream().noneMatch(h -> h.toString().equals(ip))) {
        out.add(ip);
      }
    }
    return out;
  }

  /**
   * Runs the writes side by side and waits for all of them; their results in order (null for one that
   * threw, with its failure recorded: a bug in one write must not hide the others' outcome).
   */
  private <T> List<T> all(List<Supplier<T>> writes, List<String> failures) {
    List<CompletableFuture<T>> running = new ArrayList<>(writes.size());
    for (Supplier<T> write : writes) {
      running.add(CompletableFuture.supplyAsync(write, executor).exceptionally(e -> {
        failures.add("write failed: " + (e.getCause() != null ? e.getCause() : e));
        return null;
      }));
    }
    List<T> out = new ArrayList<>(running.size());
    for (CompletableFuture<T> f : running) {
      out.add(f.join());
    }
    return out;
  }

  /**
   * Writes one HostSubnet (only its removals when {@code removalsOnly}); the object as it now is, null when
   * failed or when it no longer exists (then named in {@code deleted}).
   */
  private HostSubnet setHostSubnet(HostSubnet seen, NetworkWrite w, Predicate<String> ours, boolean removalsOnly,
      Set<String> stuck, List<String> failures, Set<String> deleted) {
    String node = seen.getMetadata().getName();
    HostSubnet base = seen;
    for (int attempt = 0; attempt < ATTEMPTS && base != null; attempt++) {
      // Computed from the object the write is conditioned on: foreign entries as they are in it.
      List<String> ips = keepForeign(base.getEgressIPs(), ours);
      List<String> cidrs = keepForeign(base.getEgressCIDRs(), ours);
      Set<Ip> hosted = w.hosting().get(node);
      if (hosted != null) {
        Set<String> now = new TreeSet<>(base.getEgressIPs() == null ? List.of() : base.getEgressIPs());
        hosted.stream().sorted().map(Ip::toString).filter(ip -> removalsOnly ? now.contains(ip) : !stuck.contains(ip)
            || now.contains(ip)).forEach(ips::add);
      }
      IpRange cidr = w.cidrMode().get(node);
      if (cidr != null) {
        Set<String> now = new TreeSet<>(base.getEgressCIDRs() == null ? List.of() : base.getEgressCIDRs());
        if (!removalsOnly || now.contains(cidr.text())) {
          cidrs.add(cidr.text());
        }
      }
      if (sameSet(ips, base.getEgressIPs()) && sameSet(cidrs, base.getEgressCIDRs())) {
        return base;
      }
      Map<String, Object> patch = new LinkedHashMap<>();
      patch.put("egressIPs", ips);
      patch.put("egressCIDRs", cidrs);
      try {
        HostSubnet done = patch(HostSubnet.class, node, base.getMetadata().getResourceVersion(), patch);
        wrote.accept(done);
        return done;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          deleted.add(node);
          gone.accept(base);
          return null;
        }
        if (e.getCode() != 409) {
          failures.add("HostSubnet " + node + ": " + e.getMessage());
          return null;
        }
        HostSubnet fresh = client.resources(HostSubnet.class).withName(node).get();
        if (fresh == null) {
          deleted.add(node);
          gone.accept(base);
        }
        base = fresh;
      }
    }
    if (base != null) {
      failures.add("HostSubnet " + node + ": changed by another writer " + ATTEMPTS + " times in a row; again later");
    }
    return null;
  }

  /** Writes one NetNamespace's egress IPs (returns nothing: a value only for {@link #all}). */
  private Void setNetNamespace(String ns, List<String> ourIps, Predicate<String> ours, List<String> failures) {
    NetNamespace current = netNamespaces.apply(ns);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (current == null) {
        if (!ourIps.isEmpty()) {
          failures.add("NetNamespace " + ns + " does not exist yet (OpenShift SDN creates it)");
        }
        return null;
      }
      List<String> desired = new ArrayList<>(ourIps);
      for (String ip : current.getEgressIPs() == null ? List.<String>of() : current.getEgressIPs()) {
        if (!ours.test(ip) && !desired.contains(ip)) {
          desired.add(ip); // set by someone else: not ours to remove
        }
      }
      if (Objects.equals(desired, current.getEgressIPs() == null ? List.of() : current.getEgressIPs())) {
        return null;
      }
      try {
        wrote.accept(patch(NetNamespace.class, ns, current.getMetadata().getResourceVersion(),
            Map.of("egressIPs", desired)));
        return null;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          current = null;
        } else if (e.getCode() == 409) {
          current = client.resources(NetNamespace.class).withName(ns).get();
        } else {
          failures.add("NetNamespace " + ns + ": " + e.getMessage());
          return null;
        }
      }
    }
    failures.add("NetNamespace " + ns + ": changed by another writer " + ATTEMPTS + " times in a row; again later");
    return null;
  }

  /** A JSON merge patch of our fields, conditioned on the resourceVersion they were computed from. */
  private <T extends HasMetadata> T patch(Class<T> type, String name, String resourceVersion, Map<String, Object> fields) {
    Map<String, Object> body = new LinkedHashMap<>(fields);
    body.put("metadata", Map.of("resourceVersion", resourceVersion));
    return MergePatch.apply(client, type, null, name, Serialization.asJson(body));
  }

  private static List<String> keepForeign(List<String> values, Predicate<String> ours) {
    List<String> out = new ArrayList<>();
    if (values != null) {
      for (String v : values) {
        if (!ours.test(v)) {
          out.add(v);
        }
      }
    }
    return out;
  }

  private static boolean sameSet(List<String> a, List<String> b) {
    return new TreeSet<>(a).equals(new TreeSet<>(b == null ? List.of() : b));
  }

  /** The egress IPs each HostSubnet hosts, as the planner's starting point. */
  public static Map<String, Set<Ip>> hosting(Collection<HostSubnet> subnets) {
    Map<String, Set<Ip>> out = new HashMap<>();
    for (HostSubnet hs : subnets) {
      Set<Ip> ips = new TreeSet<>();
      if (hs.getEgressIPs() != null) {
        for (String s : hs.getEgressIPs()) {
          try {
            ips.add(Ip.parse(s));
          } catch (IllegalArgumentException e) {
            // not an address: not ours, left alone
          }
        }
      }
      out.put(hs.getMetadata().getName(), ips);
    }
    return out;
  }

  /** Each node's SDN host address, never to be handed out. */
  public static Map<String, Ip> hostIps(Collection<HostSubnet> subnets) {
    Map<String, Ip> out = new HashMap<>();
    for (HostSubnet hs : subnets) {
      try {
        if (hs.getHostIP() != null) {
          out.put(hs.getMetadata().getName(), Ip.parse(hs.getHostIP()));
        }
      } catch (IllegalArgumentException e) {
        // a malformed hostIP cannot collide with a parsed address either
      }
    }
    return out;
  }
}
