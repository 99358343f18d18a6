package org.ipamoperators.keepalived.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;

/**
 * VRRP PASS authentication: the password is in a Secret of the group's namespace ({@code secretRef.name}), under
 * {@code secretKey} ({@code password} by default). The Secret is watched: a new password is rendered at once.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PasswordAuth(@Required SecretRef secretRef, @Default("password") String secretKey) {

  /** A reference to a Secret in the group's namespace. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SecretRef(@Required String name) {}

  public String keyOrDefault() {
    return secretKey == null || secretKey.isBlank() ? "password" : secretKey;
  }
}
