package org.ipamoperators.keepalived.config;

import java.util.Objects;

/**
 * Something the user should know about a rendered configuration (a setting that cannot apply as given, an instance
 * a node has to leave out); for Events and conditions on the group.
 *
 * @param subject the group ({@code ns/name}) or the instance name it concerns
 * @param message what happened, for people
 */
public record Notice(String subject, String message) {

  public Notice {
    Objects.requireNonNull(subject, "subject");
    Objects.requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return subject + ": " + message;
  }
}
