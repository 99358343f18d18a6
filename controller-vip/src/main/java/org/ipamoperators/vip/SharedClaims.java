package org.ipamoperators.vip;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.plan.ShareMember;
import org.ipamoperators.vip.plan.Sharing;

/**
 * Addresses shared by several Services, in the shared ledger: the claim is owned by the sharing key
 * (owner kind {@code SharingKey}, so no other owner can ever hold the address), and the Services
 * using it are listed on the claim (annotation {@value VipAnnotations#SHARING_MEMBERS}). Joining and
 * leaving are optimistic updates of that one object, so a Service joining while the last member
 * leaves either lands in the list or finds the claim gone, never in between: the address is
 * released (the claim deleted, conditional on its resourceVersion) only when the last member leaves.
 *
 * <p>Built in controller-vip because the ledger of controller-common records one owner per claim;
 * the claim objects and their labels are the ledger's own.
 */
final class SharedClaims {
  static final String KIND = org.ipamoperators.vip.plan.LedgerEntry.SHARING_KIND;
  static final String LABEL_KEY = "ipam.ipamoperators.org/sharing-key";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int ATTEMPTS = 10;
  private final KubernetesClient client;
  /** Told of every claim written or deleted here, so this process's planning sees it at once. */
  private final org.ipamoperators.controller.common.ledger.ClaimIndex index;

  SharedClaims(KubernetesClient client, org.ipamoperators.controller.common.ledger.ClaimIndex index) {
    this.client = client;
    this.index = index;
  }

  static ClaimOwner owner(String key) {
    return new ClaimOwner(ServiceVipReconciler.CONTROLLER, KIND, null, key, null);
  }

  static boolean isShared(ClaimOwner o) {
    return o != null && ServiceVipReconciler.CONTROLLER.equals(o.controller()) && KIND.equals(o.kind());
  }

  /** The members recorded on a claim; empty for a claim that is not shared or has garbage in it. */
  static List<ShareMember> members(IPClaim c) {
    Map<String, String> a = c.getMetadata().getAnnotations();
    String v = a == null ? null : a.get(VipAnnotations.SHARING_MEMBERS);
    if (v == null || v.isBlank()) {
      return List.of();
    }
    try {
      return JSON.readValue(v, new TypeReference<List<ShareMember>>() {});
    } catch (Exception e) {
      return List.of();
    }
  }

  static Optional<ShareMember> member(IPClaim c, String service) {
    return members(c).stream().filter(m -> m.service().equals(service)).findFirst();
  }

  static String json(List<ShareMember> members) {
    try {
      return JSON.writeValueAsString(members);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  enum Outcome {
    CREATED, JOINED, HELD_BY_OTHER, CLASH;

    boolean ours() {
      return this == CREATED || this == JOINED;
    }
  }

  /**
   * The answer to a join: the holder when held by another owner, the clash when the ports clash;
   * the claim as last read or written.
   */
  record Joined(Outcome outcome, String detail, IPClaim claim) {
    Joined(Outcome outcome, String detail) {
      this(outcome, detail, null);
    }
  }

  /**
   * Makes {@code member} a user of the address under {@code key}: creates the claim (with the
   * member) when there is none, adds or updates the member's entry otherwise. Refused when another
   * owner holds the address or the member clashes with the others (checked on the fresh object).
   */
  Joined join(Ip ip, String pool, String key, ShareMember member) {
    String name = ClaimNames.of(ip);
    ClaimOwner owner = owner(key);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      IPClaim c = client.resources(IPClaim.class).withName(name).get();
      if (c == null) {
        Map<String, String> labels = new TreeMap<>(ClusterLedger.labels(ip, pool, owner));
        labels.put(LABEL_KEY, ClaimNames.labelValue(key));
        IPClaim wanted = IPClaim.of(name, new IPClaimSpec(ip.toString(), pool, owner), labels);
        wanted.getMetadata().setAnnotations(new HashMap<>(Map.of(VipAnnotations.SHARING_MEMBERS, json(List.of(member)))));
        try {
          IPClaim created = client.resource(wanted).create();
          // The same check as every claim's: an IPBlock entry written meanwhile keeps the address.
          ClaimResult checked = new ClusterLedger(client).checkBlock(ip, owner, created);
          if (checked.outcome() != ClaimResult.Outcome.CLAIMED) {
            return new Joined(Outcome.HELD_BY_OTHER, ip + " is held by " + checked.holder().describe(), null);
          }
          index.created(created);
          return new Joined(Outcome.CREATED, null, created);
        } catch (KubernetesClientException e) {
          if (e.getCode() == 409) {
            pause(attempt);
            continue;
          }
          throw e;
        }
      }
      index.created(c);
      if (!owner.sameAs(c.getSpec().owner())) {
        return new Joined(Outcome.HELD_BY_OTHER, describe(c), c);
      }
      List<ShareMember> members = members(c);
      Optional<ShareMember> mine = members.stream().filter(m -> m.service().equals(member.service())).findFirst();
      if (mine.isPresent() && mine.get().sameEntry(member)) {
        return new Joined(Outcome.JOINED, null, c);
      }
      Optional<String> clash = Sharing.conflict(member, members);
      if (clash.isPresent()) {
        return new Joined(Outcome.CLASH, ip + " is shared under key " + key
            + " and cannot be shared with this Service: " + clash.get());
      }
      List<ShareMember> next = new ArrayList<>(members.stream().filter(m -> !m.service().equals(member.service())).toList());
      next.add(member);
      IPClaim written = write(c, next);
      if (written != null) {
        return new Joined(Outcome.JOINED, null, written);
      }
      pause(attempt);
    }
    throw new IllegalStateException("the claim on " + ip + " kept changing; will retry");
  }

  /**
   * Removes a Service from the users of a shared address; the last one to leave releases it.
   * Returns whether the Service was a member.
   */
  boolean leave(Ip ip, String service) {
    return leave(ip, service, null);
  }

  /**
   * {@link #leave}, only when the member recorded under {@code service} has {@code uid} (any when
   * null): the sweep removes a Service that is gone, never its successor of the same name.
   */
  boolean leave(Ip ip, String service, String uid) {
    String name = ClaimNames.of(ip);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      IPClaim c = client.resources(IPClaim.class).withName(name).get();
      if (c == null || !isShared(c.getSpec().owner())) {
        return false;
      }
      List<ShareMember> members = members(c);
      List<ShareMember> rest = members.stream()
          .filter(m -> !(m.service().equals(service) && (uid == null || m.uid() == null || uid.equals(m.uid()))))
          .toList();
      if (rest.size() == members.size()) {
        return false;
      }
      if (rest.isEmpty()) {
        try {
          client.resources(IPClaim.class).withName(name).lockResourceVersion(c.getMetadata().getResourceVersion()).delete();
          index.deleted(c);
          return true;
        } catch (KubernetesClientException e) {
          if (e.getCode() == 404) {
            index.deleted(c);
            return true;
          }
          if (e.getCode() != 409) {
            throw e;
          }
          pause(attempt);
          continue;
        }
      }
      if (write(c, rest) != null) {
        return true;
      }
      pause(attempt);
    }
    throw new IllegalStateException("the claim on " + ip + " kept changing; will retry");
  }

  /**
   * After a write lost to another one: a random pause growing with the attempt (at most 10 ms per
   * attempt), so that Services joining or leaving one address at once do not keep colliding in step.
   */
  private static void pause(int attempt) {
    try {
      Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(10 * (attempt + 1)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Writes the member list, conditional on the resourceVersion read; null when someone else wrote first. */
  private IPClaim write(IPClaim c, List<ShareMember> members) {
    Map<String, String> a = c.getMetadata().getAnnotations() == null ? new HashMap<>()
        : new HashMap<>(c.getMetadata().getAnnotations());
    a.put(VipAnnotations.SHARING_MEMBERS, json(members));
    c.getMetadata().setAnnotations(a);
    try {
      IPClaim written = client.resource(c).update(); // carries the resourceVersion read: 409 if it changed
      index.created(written);
      return written;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return null;
      }
      throw e;
    }
  }

  /** "sharing key k (ns/a, ns/b)" or the owner's own description. */
  static String describe(IPClaim c) {
    ClaimOwner o = c.getSpec().owner();
    if (!isShared(o)) {
      return o.describe();
    }
    return "sharing key " + o.name() + " (" + String.join(", ", members(c).stream().map(ShareMember::service).toList()) + ")";
  }
}
