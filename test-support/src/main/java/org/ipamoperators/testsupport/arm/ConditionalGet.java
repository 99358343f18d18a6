package org.ipamoperators.testsupport.arm;

import java.util.Arrays;
import java.util.Map;

/**
 * HTTP's conditional GET, evaluated when the settings ask for it: a client whose PUT's
 * {@code If-Match} leaks onto its polls or final GET fails here as it risks to on Azure.
 */
final class ConditionalGet {
  private ConditionalGet() {}

  /**
   * Against a resource whose current etag is {@code etag} (null: it has none): false for 304, an
   * {@link ArmError} 412 when {@code If-Match} fails.
   */
  static boolean check(ArmSettings settings, Map<String, String> headers, String etag, String what) {
    if (!settings.conditionalReads) {
      return true;
    }
    String ifMatch = headers.get("if-match");
    String ifNoneMatch = headers.get("if-none-match");
    if (ifMatch != null && !("*".equals(ifMatch.trim()) || etag != null && etagListed(ifMatch, etag))) {
      throw new ArmError(412, "PreconditionFailed", "The condition If-Match: " + ifMatch + " on a GET of " + what
          + " does not hold: its etag is " + (etag == null ? "none" : etag) + ".");
    }
    if (ifNoneMatch != null && ("*".equals(ifNoneMatch.trim()) || etag != null && etagListed(ifNoneMatch, etag))) {
      if (etag == null) {
        throw new ArmError(412, "PreconditionFailed", "The condition If-None-Match: " + ifNoneMatch + " on a GET of "
            + what + " does not hold: it exists.");
      }
      return false;
    }
    return true;
  }

  private static boolean etagListed(String header, String etag) {
    return Arrays.stream(header.split(",")).map(String::trim).anyMatch(etag::equals);
  }
}
