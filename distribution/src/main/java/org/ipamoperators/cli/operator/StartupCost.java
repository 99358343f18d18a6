package org.ipamoperators.cli.operator;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/** What start-up cost, for the "started" log line: a user sees it without a profiler. */
final class StartupCost {
  private StartupCost() {
  }

  /** For example "1803 ms after the JVM started, 2.07 CPU s" (CPU: all threads, user and system). */
  static String sinceJvmStart() {
    long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        && os.getProcessCpuTime() >= 0) {
      return String.format(Locale.ROOT, "%d ms after the JVM started, %.2f CPU s", uptime,
          os.getProcessCpuTime() / 1e9);
    }
    return uptime + " ms after the JVM started";
  }
}
