package org.ipamoperators.cloud.aws;

import java.util.Optional;

/** The EC2 instance id of a node's {@code spec.providerID}, such as {@code aws:///us-east-1a/i-0abc}. */
public final class ProviderId {
  private ProviderId() {}

  public static Optional<String> instanceId(String providerId) {
    if (providerId == null || !providerId.startsWith("aws://")) {
      return Optional.empty();
    }
    String last = providerId.substring(providerId.lastIndexOf('/') + 1);
    return last.startsWith("i-") && last.length() > 2 ? Optional.of(last) : Optional.empty();
  }
}
