package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.ipamoperators.controller.common.kube.OwnWrites;
import org.ipamoperators.vip.api.VipAnnotations;

/**
 * The status writes of this process that leave a Service served (its condition True), by the Service's uid,
 * from just before each is sent until the informer brings it back. An update that is only such a write coming
 * back (spec and metadata unchanged; ingress and condition exactly as written) needs no reconcile: the pass that
 * wrote it had settled the Service, and skipping it saves a reconcile per Service in a catch-up. Any other
 * change, the periodic resync, and an echo this table missed or that comes after {@link #FORGOTTEN_AFTER} still
 * reconcile. Kept in controller-common's {@link OwnWrites} by what the echo shows, since the writer does not read
 * the answer. One table per reconciler: its status writer notes the writes, its Services' update filter reads them.
 */
final class OwnStatusWrites {
  /** Long past any informer lag: bounds the table when an echo never comes. */
  static final Duration FORGOTTEN_AFTER = Duration.ofMinutes(5);

  private final OwnWrites<Service> written = OwnWrites.created(UnaryOperator.identity(), FORGOTTEN_AFTER);

  private record Written(List<String> ingress, String status, String reason, String message) {
    boolean shownBy(Service s) {
      if (!ingress.equals(VipServices.ingress(s)) || s.getStatus() == null || s.getStatus().getConditions() == null) {
        return false;
      }
      return s.getStatus().getConditions().stream().filter(c -> VipAnnotations.CONDITION.equals(c.getType()))
          .anyMatch(c -> status.equals(c.getStatus()) && reason.equals(c.getReason()) && message.equals(c.getMessage()));
    }
  }

  /**
   * Before a status write is sent (its echo may come before its answer): remembered only when it
   * leaves the Service served, else any earlier write of it is forgotten. Returns what to hand to
   * {@link #failed} if the write does not succeed.
   */
  Object writing(Service svc, List<String> ingress, Condition condition) {
    String uid = svc.getMetadata().getUid();
    if (uid == null) {
      return null;
    }
    if (condition == null || !"True".equals(condition.getStatus()) || condition.getReason() == null
        || condition.getMessage() == null) {
      written.forget(uid);
      return null;
    }
    Written w = new Written(List.copyOf(ingress), condition.getStatus(), condition.getReason(), condition.getMessage());
    return written.expect(uid, w::shownBy);
  }

  /** The write noted by {@link #writing} was refused or failed: nothing of it comes back. */
  void failed(Service svc, Object noted) {
    String uid = svc.getMetadata().getUid();
    if (uid != null) {
      written.failed(uid, noted);
    }
  }

  /** The Service is gone: nothing of it comes back. */
  void forget(Service svc) {
    String uid = svc.getMetadata().getUid();
    if (uid != null) {
      written.forget(uid);
    }
  }

  /**
   * Whether {@code now} differs from {@code before} only by a status write of this process that left
   * it served (consumed: the same update is not skipped twice).
   */
  boolean isEcho(Service now, Service before) {
    String uid = now.getMetadata() == null ? null : now.getMetadata().getUid();
    return uid != null && before != null && sameButStatus(now, before) && written.isEcho(uid, now);
  }

  private static boolean sameButStatus(Service now, Service before) {
    ObjectMeta a = now.getMetadata();
    ObjectMeta b = before.getMetadata();
    return b != null && Objects.equals(a.getUid(), b.getUid()) && Objects.equals(a.getGeneration(), b.getGeneration())
        && Objects.equals(a.getDeletionTimestamp(), b.getDeletionTimestamp())
        && Objects.equals(a.getLabels(), b.getLabels()) && Objects.equals(a.getAnnotations(), b.getAnnotations())
        && Objects.equals(a.getFinalizers(), b.getFinalizers()) && Objects.equals(now.getSpec(), before.getSpec());
  }
}
