package org.ipamoperators.cli.audit;

/** Told what the audit has read, as it reads it: a big cluster's audit says where it is. */
@FunctionalInterface
public interface AuditProgress {
  /** Says nothing. */
  AuditProgress NONE = (kind, count) -> { };

  /**
   * One list read from the API server.
   *
   * @param kind the objects' kind
   * @param count how many were read
   */
  void read(String kind, int count);
}
