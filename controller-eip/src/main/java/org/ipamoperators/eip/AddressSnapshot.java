package org.ipamoperators.eip;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.api.EipNames;

/**
 * One DescribeAddresses of the cluster's addresses (its {@code cluster_name} tag, and {@code namespace} when
 * scoped) shared by every Eip reconciled while it is fresh, instead of one call per Eip per resync. An Eip whose
 * address this controller changed since the snapshot was taken, or whose UID the snapshot does not show (a new Eip,
 * an address without our cluster tag), is asked about directly: an address is never allocated because a
 * snapshot missed it. A change made outside (the console) is seen within the resync interval plus {@code maxAge}.
 */
final class AddressSnapshot {
  private final ElasticIps ec2;
  private final Map<String, String> scope;
  private final Duration maxAge;
  private final Clock clock;
  /** One refresh at a time; readers that waited for it use its result. */
  private final Object refreshing = new Object();
  // guarded by this
  private Instant takenAt;
  private Map<String, List<ElasticIp>> byUid = Map.of();
  private long changes;
  private final Map<String, Long> changedAt = new HashMap<>();

  AddressSnapshot(ElasticIps ec2, Map<String, String> scope, Duration maxAge, Clock clock) {
    this.ec2 = ec2;
    this.scope = Map.copyOf(scope);
    this.maxAge = maxAge;
    this.clock = clock;
  }

  /** The addresses tagged with this UID: from the snapshot when it may answer, else by a call of their own. */
  List<ElasticIp> tagged(String uid) {
    Optional<List<ElasticIp>> known = known(uid);
    if (known.isEmpty() && !Duration.ZERO.equals(maxAge) && !isChanged(uid) && !isFresh()) {
      refresh();
      known = known(uid);
    }
    return known.orElseGet(() -> ec2.withTags(Map.of(EipNames.TAG_UID, uid)));
  }

  /** This controller changed (or is about to change) the addresses of this UID: asked directly until re-read. */
  synchronized void changed(String uid) {
    changedAt.put(uid, ++changes);
  }

  private synchronized boolean isChanged(String uid) {
    return changedAt.containsKey(uid);
  }

  private synchronized boolean isFresh() {
    return takenAt != null && clock.instant().isBefore(takenAt.plus(maxAge));
  }

  private synchronized Optional<List<ElasticIp>> known(String uid) {
    if (!isFresh() || changedAt.containsKey(uid)) {
      return Optional.empty();
    }
    return Optional.ofNullable(byUid.get(uid));
  }

  private void refresh() {
    synchronized (refreshing) {
      if (isFresh()) {
        return; // another reader refreshed it meanwhile
      }
      long before;
      synchronized (this) {
        before = changes;
      }
      Instant at = clock.instant();
      Map<String, List<ElasticIp>> read = new HashMap<>();
      for (ElasticIp a : ec2.withTags(scope)) {
        String uid = a.tag(EipNames.TAG_UID);
        if (uid != null) {
          read.computeIfAbsent(uid, k -> new ArrayList<>()).add(a);
        }
      }
      synchronized (this) {
        byUid = read;
        takenAt = at;
        // Changes made before this read are in it; later ones still need a call of their own.
        changedAt.values().removeIf(n -> n <= before);
      }
    }
  }
}
