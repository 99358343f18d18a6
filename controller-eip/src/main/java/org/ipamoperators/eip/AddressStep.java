package org.ipamoperators.eip;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIpException;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipAllocation;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.plan.AddressPlan;
import org.ipamoperators.eip.plan.EipTags;

/**
 * An Eip's one address: observed (the snapshot, or EC2, by the UID tag; by the allocation id the status names when
 * that misses it), decided ({@link AddressPlan}), applied in that order (tag again, release duplicates, else adopt
 * or allocate, then claim in the cluster's ledger) and reported.
 */
final class AddressStep {
  /** The Eip reconciled is a stale copy of one deleted or replaced: nothing is done. */
  static final ElasticIp GONE = new ElasticIp("gone", "0.0.0.0", null, null, null, null, null, Map.of());

  private final KubernetesClient client;
  private final EipSettings settings;
  private final ElasticIps ec2;
  private final AddressSnapshot snapshot;
  private final Ec2Apply apply;
  private final EipReport report;
  private final EipMetrics metrics;
  private final ClusterLedger ledger;
  private final Clock clock;
  /** Allocation ids claimed in the ledger by this process: claimed once, not on every reconcile. */
  private final Set<String> claimed = ConcurrentHashMap.newKeySet();

  AddressStep(KubernetesClient client, EipSettings settings, ElasticIps ec2, AddressSnapshot snapshot,
      Ec2Apply apply, EipReport report, EipMetrics metrics, Clock clock) {
    this.client = client;
    this.settings = settings;
    this.ec2 = ec2;
    this.snapshot = snapshot;
    this.apply = apply;
    this.report = report;
    this.metrics = metrics;
    this.ledger = new ClusterLedger(client);
    this.clock = clock;
  }

  /**
   * The Eip's one address, recorded in the status. Null when none could be had (quota, nothing to adopt): the
   * status says why. {@link #GONE} when the Eip is a stale copy of one deleted or replaced ({@link #stillThere}).
   */
  ElasticIp address(Eip eip, EipSelector selector, StatusDraft status) {
    Map<String, String> ours = tags(eip, selector);
    AddressPlan plan = plan(eip, snapshot.tagged(eip.getMetadata().getUid()), ours);
    for (ElasticIp a : plan.retag().stream().toList()) {
      apply.tag(a, plan.retagWith(), status);
      report.retagged(eip, a);
    }
    for (ElasticIp duplicate : plan.release()) {
      apply.release(duplicate, status);
      report.duplicateReleased(eip, duplicate, plan.keep().orElseThrow());
    }
    ElasticIp address;
    if (plan.keep().isPresent()) {
      address = plan.keep().get();
    } else {
      if (!stillThere(eip)) {
        return GONE;
      }
      address = adoptOrAllocate(eip, ours, status);
      if (address == null) {
        return null;
      }
      report.newAddress(eip, status, address);
    }
    report.hasAddress(status, address);
    claimInLedger(eip, address);
    return address;
  }

  /**
   * The address the Eip holds already, if any, recorded in the status; nothing is allocated, adopted, tagged or
   * released (an Eip that may not have one now keeps what it had, untouched, until it is deleted).
   */
  Optional<ElasticIp> existing(Eip eip, StatusDraft status) {
    Optional<ElasticIp> kept = plan(eip, snapshot.tagged(eip.getMetadata().getUid()), null).keep();
    kept.ifPresent(a -> report.hasAddress(status, a));
    return kept;
  }

  /** The Eip is being deleted: its addresses as EC2 has them now (no snapshot), none tagged again. */
  List<ElasticIp> owned(Eip eip) {
    return plan(eip, ec2.withTags(Map.of(EipNames.TAG_UID, eip.getMetadata().getUid())), null).all();
  }

  private AddressPlan plan(Eip eip, List<ElasticIp> tagged, Map<String, String> ours) {
    String recorded = eip.getStatus() == null ? null : eip.getStatus().allocationId();
    Optional<ElasticIp> found = AddressPlan.lookUpRecorded(tagged, recorded) ? ec2.byAllocationId(recorded)
        : Optional.empty();
    return AddressPlan.of(eip.getMetadata().getUid(), tagged, recorded, found, ours);
  }

  /** Disassociates the address, then releases it or (Retain) removes our tags, then frees its ledger claim. */
  void giveBack(Eip eip, ElasticIp a, boolean retain) {
    apply.giveBack(a, retain);
    report.deleted(eip, a, retain);
    ledger.release(Ip.parse(a.publicIp()), EipReads.owner(eip));
    claimed.remove(a.allocationId());
  }

  private Map<String, String> tags(Eip eip, EipSelector selector) {
    return EipTags.of(settings.clusterName(), eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
        eip.getMetadata().getUid(), selector, settings.defaultTags());
  }

  /**
   * Whether this Eip, as the apiserver has it now, is the one being reconciled: not deleted, not deleting, not
   * replaced by another of its name. A replica whose watches went quiet reconciles what it last heard; allocating
   * for a copy that is gone would leak an address tagged with a dead UID, and its status write (by name) would
   * give that address to the Eip made again under the name, which then changes once that Eip is served. Asked only
   * before an address is allocated or adopted, so it costs one read per new address.
   */
  private boolean stillThere(Eip eip) {
    Eip live = client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace())
        .withName(eip.getMetadata().getName()).get();
    if (live != null && eip.getMetadata().getUid().equals(live.getMetadata().getUid())
        && live.getMetadata().getDeletionTimestamp() == null) {
      return true;
    }
    report.staleCopy(eip, live);
    return false;
  }

  private ElasticIp adoptOrAllocate(Eip eip, Map<String, String> tags, StatusDraft status) {
    EipAllocation allocation = eip.getSpec().allocation();
    if (allocation != null && allocation.adoptTags() != null && !allocation.adoptTags().isEmpty()) {
      return adopt(eip, tags, allocation.adoptTags(), status);
    }
    try {
      ElasticIp a = apply.allocate(AddressPlan.allocationTags(tags, clock.instant()),
          allocation == null ? null : allocation.publicIpv4Pool(), status);
      report.allocated(eip, a);
      return a;
    } catch (ElasticIpException e) {
      metrics.allocateFailed(e.code());
      if (!ElasticIpException.ADDRESS_LIMIT_EXCEEDED.equals(e.code())) {
        throw e;
      }
      report.quotaExceeded(eip, status, quotaUsage());
      return null;
    }
  }

  /** The first adoptable address the ledger lets this Eip claim; null (and the condition) when there is none. */
  private ElasticIp adopt(Eip eip, Map<String, String> tags, Map<String, String> adoptTags, StatusDraft status) {
    for (ElasticIp candidate : AddressPlan.adoptable(ec2.withTags(adoptTags))) {
      if (!ledger.claim(Ip.parse(candidate.publicIp()), pool(), EipReads.owner(eip)).ours()) {
        continue;
      }
      apply.tag(candidate, tags, status);
      claimed.add(candidate.allocationId());
      report.adopted(eip, candidate, adoptTags);
      return candidate;
    }
    report.noAddressToAdopt(status, adoptTags);
    return null;
  }

  private String quotaUsage() {
    try {
      int used = ec2.count();
      var quota = ec2.quota();
      if (quota.isPresent()) {
        metrics.quota(quota.getAsInt(), used);
        return " (" + used + " of " + quota.getAsInt() + " addresses, quota from " + ec2.quotaSource() + ")";
      }
      return " (" + used + " addresses)";
    } catch (ElasticIpException e) {
      return "";
    }
  }

  private void claimInLedger(Eip eip, ElasticIp address) {
    if (claimed.contains(address.allocationId())) {
      return;
    }
    ClaimResult r = ledger.claim(Ip.parse(address.publicIp()), pool(), EipReads.owner(eip));
    if (r.ours()) {
      claimed.add(address.allocationId());
    } else {
      report.claimedElsewhere(eip, address, r.holder().describe());
    }
  }

  private String pool() {
    return "eip/" + settings.clusterName();
  }
}
