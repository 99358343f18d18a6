package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;

/** The long-running operation of one NIC PUT: its polls, status, the failure it ends with and what it undoes then. */
final class AsyncOperation {
  final String id;
  final String nicKey;
  final Instant started = Instant.now();
  int polls;
  String status = "InProgress";
  Failure failure;
  List<ObjectNode> rollback;

  /** The error a failed operation reports. */
  record Failure(String code, String message) {}

  AsyncOperation(String id, String nicKey) {
    this.id = id;
    this.nicKey = nicKey;
  }
}
