package org.ipamoperators.cli.plan;

/** A plan file that cannot be read, with the line or field at fault in the message. */
final class PlanFileException extends Exception {
  private static final long serialVersionUID = 1L;

  PlanFileException(String message) {
    super(message);
  }
}
