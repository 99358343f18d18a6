package org.ipamoperators.testsupport.kube;

import java.time.Duration;

/** Tells a kube-api-test start that gave up early (its clock wrapped at midnight) from one that timed out. */
final class StartupRetry {

  /** The message kube-api-test's readiness wait ends with, for etcd and kube-apiserver alike. */
  static final String GAVE_UP = "did not start properly";

  private StartupRetry() {}

  /**
   * True when the start failed with kube-api-test's readiness message although less time than one readiness
   * timeout was spent: only the wrapped {@code LocalTime} comparison ends a wait that soon.
   */
  static boolean gaveUpEarly(Throwable failure, Duration spent, Duration timeout) {
    if (spent.compareTo(timeout) >= 0) {
      return false;
    }
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains(GAVE_UP)) {
        return true;
      }
    }
    return false;
  }
}
