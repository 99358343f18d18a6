package org.ipamoperators.eip.plan;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;

/**
 * What an Eip does with its addresses in EC2, from what EC2 shows: the addresses tagged with its UID and, when that
 * lookup missed the one its status names (EC2's tag index lags behind, or the tags were removed), that one as found
 * by its allocation id. The latter is taken back unless it carries another Eip's UID, and tagged again when
 * {@code ourTags} are given (a deletion only releases it). Then {@link AddressChoice} keeps one and releases the
 * rest; with none kept, one is adopted or allocated. Without the lookup by allocation id a missed tag lookup would
 * allocate a second address, move the workload to a new public IP and leave the first one untagged, beyond the
 * sweep. Pure.
 *
 * @param retag the address found by its allocation id only, to be tagged again with {@link #retagWith}
 * @param keep the Eip's address; empty: one must be adopted or allocated
 * @param release duplicates, to be disassociated and released
 */
public record AddressPlan(Optional<ElasticIp> retag, Map<String, String> retagWith, Optional<ElasticIp> keep,
    List<ElasticIp> release) {

  public AddressPlan {
    retagWith = retagWith == null ? Map.of() : Map.copyOf(retagWith);
    release = List.copyOf(release);
  }

  public boolean needsAddress() {
    return keep.isEmpty();
  }

  /** Every address of the Eip: the one kept, then the duplicates. */
  public List<ElasticIp> all() {
    List<ElasticIp> all = new ArrayList<>();
    keep.ifPresent(all::add);
    all.addAll(release);
    return all;
  }

  /** Whether the address the status names must be looked up by its allocation id: the tag lookup did not show it. */
  public static boolean lookUpRecorded(List<ElasticIp> tagged, String statusAllocationId) {
    return statusAllocationId != null && tagged.stream().noneMatch(a -> a.allocationId().equals(statusAllocationId));
  }

  /**
   * @param tagged the addresses tagged with {@code uid}
   * @param recorded the address the status names, when {@link #lookUpRecorded} asked for it and EC2 has it
   * @param ourTags the Eip's tags, to tag a recorded address again; null when the Eip is being deleted
   */
  public static AddressPlan of(String uid, List<ElasticIp> tagged, String statusAllocationId,
      Optional<ElasticIp> recorded, Map<String, String> ourTags) {
    List<ElasticIp> own = new ArrayList<>(tagged);
    Optional<ElasticIp> retag = Optional.empty();
    Optional<ElasticIp> taken = recorded.filter(a -> lookUpRecorded(tagged, statusAllocationId)
        && a.allocationId().equals(statusAllocationId) && ours(a, uid));
    if (taken.isPresent()) {
      ElasticIp a = taken.get();
      if (ourTags != null) {
        retag = taken;
        Map<String, String> tags = new LinkedHashMap<>(a.tags());
        tags.putAll(ourTags);
        a = new ElasticIp(a.allocationId(), a.publicIp(), a.associationId(), a.networkInterfaceId(), a.privateIp(),
            a.instanceId(), a.publicIpv4Pool(), tags);
      }
      own.add(a);
    }
    AddressChoice choice = AddressChoice.of(own, statusAllocationId);
    return new AddressPlan(retag, ourTags, choice.keep(), choice.release());
  }

  /** Carries no other Eip's UID. */
  static boolean ours(ElasticIp a, String uid) {
    String owner = a.tag(EipNames.TAG_UID);
    return owner == null || owner.equals(uid);
  }

  /** The candidates (found by the adopt tags) an Eip may adopt, in order: no Eip's, and not in use. */
  public static List<ElasticIp> adoptable(List<ElasticIp> candidates) {
    return candidates.stream().filter(a -> a.tag(EipNames.TAG_UID) == null && !a.associated()).toList();
  }

  /** The tags of a new address: the Eip's and the allocation time, which orders duplicates. */
  public static Map<String, String> allocationTags(Map<String, String> tags, Instant now) {
    Map<String, String> withTime = new LinkedHashMap<>(tags);
    withTime.put(EipNames.TAG_ALLOCATED_AT, now.truncatedTo(ChronoUnit.SECONDS).toString());
    return withTime;
  }
}
