package org.ipamoperators.eip.plan;

import java.util.List;

/**
 * Whether the pod controller creates the Eip named after a pod labelled {@code autocreate_eip=true}: not when the
 * pod does not ask for one, nor while the Eip of that name is being deleted (the last pod's: look again soon), nor
 * when an Eip of that name exists already (a Warning when it selects something else), nor when a manual Eip selects
 * the pod (it wins). Pure.
 */
public sealed interface Autocreate {

  /** Nothing to do. */
  record Nothing() implements Autocreate {}

  /** The Eip of the pod's name is being deleted: look again once it is gone. */
  record WaitForDeletion() implements Autocreate {}

  /** No Eip is created: a Warning on the pod says why. */
  record Conflict(String message) implements Autocreate {}

  /** Create the Eip named after the pod, selecting it. */
  record Create() implements Autocreate {}

  /**
   * The Eip of the pod's name, as the apiserver has it.
   *
   * @param selectedPod the pod it selects, null in node mode
   * @param selects what it selects, in words ("pod x", "nodes {...}")
   */
  record Named(boolean deleting, String selectedPod, String selects) {}

  /**
   * @param autocreate the pod is labelled manage (not {@code false}) and {@code autocreate_eip=true}
   * @param named the Eip of the pod's name, null when there is none
   * @param manual the other live Eips selecting the pod (asked for only when {@link #needsManual})
   */
  static Autocreate of(String podName, boolean autocreate, Named named, List<String> manual) {
    if (!autocreate) {
      return new Nothing();
    }
    if (named != null) {
      if (named.deleting()) {
        return new WaitForDeletion();
      }
      return podName.equals(named.selectedPod()) ? new Nothing() : new Conflict("Eip " + podName + " exists and"
          + " selects " + named.selects() + ": no Eip is autocreated for this pod");
    }
    if (!manual.isEmpty()) {
      return new Conflict("Eip " + String.join(", ", manual) + " already selects this pod: no Eip is autocreated"
          + " (the manual one wins)");
    }
    return new Create();
  }

  /** Whether the Eips selecting the pod are needed for the decision: only when one may be created. */
  static boolean needsManual(boolean autocreate, Named named) {
    return autocreate && named == null;
  }
}
