package org.ipamoperators.eip.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.cloud.aws.eip.ElasticIp;

/**
 * What a pod-mode Eip does with its address now: nothing when another Eip wins the pod ({@link PodClaimant}), be
 * disassociated when the pod may not hold it ({@link PodDecision}), stay where it is when it is on the pod's IP
 * already, else be associated with the pod's IP. Pure.
 */
public sealed interface PodAction {

  /** Another Eip selecting the pod wins it: this one holds nothing. */
  record Conflict(String winner, String message) implements PodAction {}

  /** The pod may not hold the address: it is disassociated if it is, and the status says why. */
  record Detach(String reason, String message) implements PodAction {}

  /** Associated with the pod's IP already: nothing to do in EC2. */
  record Keep(String podIp) implements PodAction {}

  /** To be associated with the pod's IP on its node (the ENI is looked up); {@code moving}: it is elsewhere now. */
  record Associate(String podIp, String nodeName, boolean moving) implements PodAction {}

  /**
   * @param self this Eip as a claimant of the pod
   * @param rivals the other live Eips selecting the same pod
   * @param address this Eip's address as EC2 shows it
   */
  static PodAction of(PodClaimant self, List<PodClaimant> rivals, String podName, Optional<PodView> pod,
      ElasticIp address) {
    if (!rivals.isEmpty()) {
      List<PodClaimant> claimants = new ArrayList<>();
      claimants.add(self);
      claimants.addAll(rivals);
      String winner = PodClaimant.winner(claimants).orElseThrow().name();
      if (!winner.equals(self.name())) {
        return new Conflict(winner, "Eip " + winner + " also selects pod " + podName + " and wins (a manual Eip"
            + " before an autocreated one, then the oldest): this one holds nothing");
      }
    }
    PodDecision decision = PodDecision.of(podName, pod);
    if (decision instanceof PodDecision.Detach d) {
      return new Detach(d.reason(), d.message());
    }
    PodDecision.Associate a = (PodDecision.Associate) decision;
    if (address.associatedTo(null, a.podIp())) {
      return new Keep(a.podIp());
    }
    return new Associate(a.podIp(), a.nodeName(), address.associated());
  }
}
