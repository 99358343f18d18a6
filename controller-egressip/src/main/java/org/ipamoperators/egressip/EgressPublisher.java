package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.controller.common.kube.MergePatch;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.BlockClaim;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.BlockRequest;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.plan.EgressDecision;
import org.ipamoperators.egressip.plan.EgressPlan;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writes of a pass on the ledgers and the namespaces' annotations, in the order {@link
 * org.ipamoperators.egressip.plan.EgressWrites} gives: unpublish, claim then publish, and release.
 * Each returns what did not go through; nothing here decides what to write.
 */
final class EgressPublisher {
  private static final Logger LOG = LoggerFactory.getLogger(EgressPublisher.class);
  static final String CONTROLLER = "egressip";

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final BlockLedger blockLedger;
  private final EventRecorder events;
  private final EgressViews views;
  private final ExecutorService writers;

  EgressPublisher(KubernetesClient client, ClusterLedger ledger, BlockLedger blockLedger, EventRecorder events,
      EgressViews views, ExecutorService writers) {
    this.client = client;
    this.ledger = ledger;
    this.blockLedger = blockLedger;
    this.events = events;
    this.views = views;
    this.writers = writers;
  }

  static String pool(String ipam) {
    return EgressPolicy.pool(ipam);
  }

  static ClaimOwner owner(String namespace) {
    return new ClaimOwner(CONTROLLER, "Namespace", null, namespace, null);
  }

  private static Map<String, String> annotations(HasMetadata o) {
    return EgressFacts.annotations(o);
  }

  /**
   * Step 1 of a pass: a namespace that left this IPAM (or is being deleted: it may stay Terminating for long) loses
   * the annotation this IPAM wrote, when it still shows addresses this IPAM lets go of there ({@code cleared}: the
   * namespaces with those addresses). Returns one message per namespace whose annotation could not be removed; its
   * addresses stay claimed (the release finds them still shown) and a later pass removes it again.
   */
  List<String> unpublishLeavers(String ipam, Map<String, Set<Ip>> cleared) {
    List<String> failures = new ArrayList<>();
    cleared.forEach((ns, ours) -> {
      Namespace n = views.namespace(ns);
      boolean left = n != null && (!ipam.equals(annotations(n).get(EgressAnnotations.EGRESSIPAM))
          || n.getMetadata().getDeletionTimestamp() != null);
      if (left) {
        String refused = removeAnnotation(ns, ours);
        if (refused != null) {
          failures.add("Namespace " + ns + ": " + refused);
        }
      }
    });
    return failures;
  }

  /**
   * Step 2: every namespace's missing addresses claimed at once (one write per block touched), then per namespace,
   * in parallel (namespaces are independent), all its addresses or none, published in the annotation. A namespace
   * that did not get all of them leaves {@code served} and gives back what it got. True when a later pass must try
   * again.
   */
  boolean claimAndPublish(String ipam, EgressPlan plan, EgressDecision decision, Map<String, Namespace> opted,
      Map<String, List<Ip>> served) {
    Map<String, List<Ip>> claiming = new LinkedHashMap<>();
    for (String ns : plan.served().keySet()) {
      IpRange unknown = decision.deferred().get(ns);
      if (unknown != null) {
        served.remove(ns);
        events.warning(opted.get(ns), "EgressIPPending", "the addresses in use in " + unknown
            + " could not be discovered; " + plan.toClaim().get(ns) + " will be claimed once they are");
        continue;
      }
      List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
      String value = plan.annotations().get(ns);
      boolean recordMissing = !Objects.equals(annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS_PUBLISHED),
          value == null ? annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS) : value);
      if (toClaim.isEmpty() && value == null && !recordMissing) {
        continue; // nothing to write
      }
      claiming.put(ns, toClaim);
    }
    Map<Ip, BlockClaim> claimed = claimAll(ipam, opted, claiming);
    Map<Ip, ClaimOwner> giveBack = new ConcurrentHashMap<>();
    AtomicBoolean retry = new AtomicBoolean();
    List<Callable<Void>> tasks = new ArrayList<>();
    for (var e : claiming.entrySet()) {
      String ns = e.getKey();
      String value = plan.annotations().get(ns);
      tasks.add(() -> {
        if (!allClaimed(opted.get(ns), e.getValue(), claimed, giveBack) || !publish(opted.get(ns), value)) {
          served.remove(ns);
          retry.set(true);
        }
        return null;
      });
    }
    try {
      for (var f : writers.invokeAll(tasks)) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing addresses", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
    if (!giveBack.isEmpty()) {
      // Never published (the namespace did not get all of its addresses): nothing shows them.
      blockLedger.releaseAll(giveBack, pool(ipam));
    }
    return retry.get();
  }

  /**
   * Claims the missing addresses of every namespace to be written in this pass, in one call of the
   * block ledger (one write per block touched). Manual addresses are recorded as such, so that the
   * IPAM's deletion leaves them in their namespaces.
   */
  private Map<Ip, BlockClaim> claimAll(String ipam, Map<String, Namespace> opted, Map<String, List<Ip>> claiming) {
    List<BlockRequest> requests = new ArrayList<>();
    claiming.forEach((ns, ips) -> {
      String expected = annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS);
      boolean manual = expected != null && !expected.isBlank();
      ips.forEach(ip -> requests.add(new BlockRequest(ip, pool(ipam), owner(ns), manual ? "manual" : "allocated")));
    });
    return requests.isEmpty() ? Map.of() : blockLedger.claimAll(requests);
  }

  /**
   * Whether a namespace got every address it asked for; when not, what it got goes in {@code
   * giveBack} (released after the pass's writes) and the namespace is told why when another owner
   * was first.
   */
  private boolean allClaimed(Namespace ns, List<Ip> toClaim, Map<Ip, BlockClaim> claimed, Map<Ip, ClaimOwner> giveBack) {
    String name = ns.getMetadata().getName();
    BlockClaim refused = toClaim.stream().map(claimed::get).filter(r -> r == null || !r.ours()).findFirst()
        .orElse(null);
    if (refused == null && toClaim.stream().allMatch(claimed::containsKey)) {
      return true;
    }
    toClaim.stream().filter(ip -> claimed.get(ip) != null && claimed.get(ip).ours())
        .forEach(ip -> giveBack.put(ip, owner(name)));
    if (refused != null && refused.outcome() == BlockClaim.Outcome.HELD_BY_OTHER) {
      events.warning(ns, "AddressTaken", refused.ip() + " was claimed by "
          + (refused.holder() == null ? "another owner" : refused.holder().describe())
          + " first; another address will be chosen");
    } else if (refused != null) {
      LOG.info("namespace {}: {} could not be claimed in this pass: {}", name, refused.ip(), refused.message());
    }
    return false;
  }

  /**
   * Publishes a namespace's addresses: one merge patch of its annotations, conditioned on the
   * resourceVersion the plan was made from (so a replica with an older view never overwrites a
   * published address), carrying egressips and the record of what was published. False when it
   * must be retried.
   */
  private boolean publish(Namespace ns, String value) {
    String name = ns.getMetadata().getName();
    String expected = annotations(ns).get(EgressAnnotations.EGRESSIPS);
    String published = value != null ? value : expected;
    Map<String, Object> annotations = new HashMap<>();
    annotations.put(EgressAnnotations.EGRESSIPS, published);
    annotations.put(EgressAnnotations.EGRESSIPS_PUBLISHED, published);
    Map<String, Object> meta = new HashMap<>();
    meta.put("resourceVersion", ns.getMetadata().getResourceVersion());
    meta.put("annotations", annotations);
    try {
      views.namespacesWritten.wrote(MergePatch.apply(client, Namespace.class, null, name,
          Serialization.asJson(Map.of("metadata", meta))));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return false; // changed since the plan (or gone): the next pass starts from the new object
      }
      throw e;
    }
  }

  /**
   * Releases held addresses: block entries of this IPAM's pool in one write per block; an IPClaim of
   * an older version is deleted (guarded by its resourceVersion), never converted. Returns the entries
   * that may still stand (a contended block, a refused write), with why: they stay this IPAM's and are
   * released again by a later pass.
   */
  Map<Ip, String> release(String ipam, Collection<HeldAddress> held) {
    Map<Ip, ClaimOwner> entries = new HashMap<>();
    for (HeldAddress h : held) {
      if (h.claim() == null) {
        entries.put(h.ip(), owner(h.namespace()));
      } else if (ledger.release(h.ip(), h.claim().getSpec().owner())) {
        views.claimsWritten.deleted(h.claim().getMetadata().getName(), h.claim().getMetadata().getResourceVersion());
      }
    }
    return entries.isEmpty() ? Map.of() : blockLedger.releaseAll(entries, pool(ipam)).stillHeld();
  }

  /**
   * Removes a namespace's egressips annotation (and the record of its publication) when it shows one of {@code
   * ours}, the addresses this IPAM lets go of there: a namespace that moved to another IPAM may show that one's
   * addresses by now, which are not ours to remove. Conditioned on the resourceVersion the check was made on (read
   * again after a conflict). Null when nothing of ours is shown any more (or the namespace is gone), else the API
   * server's answer: the namespace still shows the addresses.
   */
  String removeAnnotation(String ns, Set<Ip> ours) {
    Namespace n = views.namespace(ns);
    for (int attempt = 0; attempt < 3; attempt++) {
      if (n == null || java.util.Collections.disjoint(EgressFacts.annotatedAddresses(n), ours)) {
        return null;
      }
      Map<String, Object> annotations = new HashMap<>();
      annotations.put(EgressAnnotations.EGRESSIPS, null);
      annotations.put(EgressAnnotations.EGRESSIPS_PUBLISHED, null);
      Map<String, Object> meta = Map.of("resourceVersion", n.getMetadata().getResourceVersion(),
          "annotations", annotations);
      try {
        views.namespacesWritten.wrote(MergePatch.apply(client, Namespace.class, null, ns,
            Serialization.asJson(Map.of("metadata", meta))));
        return null;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return null; // gone: it shows nothing
        }
        if (e.getCode() != 409) {
          LOG.warn("could not remove {} from namespace {}: {}", EgressAnnotations.EGRESSIPS, ns, e.getMessage());
          return e.getMessage();
        }
        n = client.namespaces().withName(ns).get(); // changed since read: decide again on what it shows now
      }
    }
    return "changed by other writers 3 times in a row while its annotation was being removed; again later";
  }
}
