package org.ipamoperators.testsupport.arm;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** The knobs a test turns through {@link ArmServer}'s configuration methods; guarded by the state's monitor. */
final class ArmSettings {
  ArmServer.PutMode putMode = ArmServer.PutMode.UPDATING;
  int pollsUntilDone = 1;
  Duration operationTime = Duration.ZERO;
  int retryAfterSeconds = 1;
  int nicLimit = ArmServer.DEFAULT_NIC_LIMIT;
  int pageSize = 50;
  Duration quarantineTime = Duration.ZERO;
  boolean enforceIfMatch = true;
  boolean conditionalReads = true;
  /** Error code -> the message sent instead of the server's own. */
  final Map<String, String> rewordings = new HashMap<>();
}
