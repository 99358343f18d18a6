package org.ipamoperators.testsupport;

/** A real binary a test tier needs is not installed; the message says how to install it. */
public final class MissingTestBinaryException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  public MissingTestBinaryException(String message) {
    super(message);
  }
}
