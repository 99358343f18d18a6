package org.ipamoperators.egressip;

import java.time.Duration;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.egressip.plan.EgressDecision;
import org.ipamoperators.egressip.plan.EgressWrites;
import org.ipamoperators.egressip.plan.NamespaceProblem;

/** When an IPAM's next pass runs: soon with back-off after a refused write, a little later after a cloud hiccup. */
final class NextPass {
  private static final Duration CLOUD_RETRY = Duration.ofSeconds(10);
  private static final Duration RELEASED_RECHECK = Duration.ofSeconds(1);
  private final RetryBackoff backoff;

  NextPass(RetryBackoff backoff) {
    this.backoff = backoff;
  }

  /**
   * @param refused a write of the pass was refused or failed (a claim, a publication, a network write)
   * @param cloudRetry a cloud call was throttled or failed after the SDK's own retries
   */
  Duration after(String ipam, EgressDecision decision, EgressWrites.Release released, boolean refused,
      boolean cloudRetry) {
    boolean heldOnNetwork = released.kept().values().stream()
        .anyMatch(s -> s.surface() != EgressWrites.Surface.INTERFACE);
    boolean heldOnInterface = released.kept().values().stream()
        .anyMatch(s -> s.surface() == EgressWrites.Surface.INTERFACE);
    if (refused || heldOnNetwork) {
      return backoff.next(ipam); // again, later each time, until it goes through
    }
    backoff.reset(ipam);
    Duration next = decision.nextReview();
    boolean waiting = decision.plan().problems().stream()
        .anyMatch(p -> p.reason() == NamespaceProblem.Reason.CIDR_EXHAUSTED);
    if (waiting && !released.now().isEmpty()) {
      // Addresses came free for namespaces waiting on them: the next pass hands them out, without waiting for
      // the ledger's own events to come back.
      return RELEASED_RECHECK;
    }
    if ((cloudRetry || !decision.deferred().isEmpty() || heldOnInterface)
        && (next == null || next.compareTo(CLOUD_RETRY) > 0)) {
      next = CLOUD_RETRY;
    }
    return next;
  }
}
