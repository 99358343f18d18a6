package org.ipamoperators.eip.plan;

import java.util.Optional;

/**
 * What a pod-mode Eip's address should do now: be associated with the pod's IP, or be associated with nothing
 * (with the reason, for the {@code Ready} condition). Pure: {@link #of(String, Optional)}.
 */
public sealed interface PodDecision {

  /** Associate with this pod's IP (the ENI is found by the reconciler: branch ENI or the instance's). */
  record Associate(String podName, String podIp, String nodeName) implements PodDecision {}

  /** Nothing to hold the address: it is disassociated if it is, and the status says why. */
  record Detach(String reason, String message) implements PodDecision {}

  static PodDecision of(String podName, Optional<PodView> pod) {
    if (pod.isEmpty()) {
      return new Detach("PodNotFound", "no pod " + podName + " labelled eip.materialize.cloud/manage in the"
          + " namespace");
    }
    PodView p = pod.get();
    if (!p.managed()) {
      return new Detach("PodNotManaged", "pod " + podName + " has eip.materialize.cloud/manage=false");
    }
    if (p.terminating()) {
      return new Detach("PodTerminating", "pod " + podName + " is being deleted");
    }
    if (p.nodeName() == null || p.nodeName().isEmpty()) {
      return new Detach("PodPending", "pod " + podName + " is not scheduled yet");
    }
    if (p.podIp() == null || p.podIp().isEmpty()) {
      return new Detach("PodHasNoIP", "pod " + podName + " has no IP yet");
    }
    return new Associate(podName, p.podIp(), p.nodeName());
  }
}
