package org.ipamoperators.testsupport.keepalived;

import java.util.List;

/**
 * The verdict of {@code keepalived --config-test} on one configuration.
 *
 * @param exitCode keepalived's exit status: 0 when the configuration is usable. keepalived 2.2.7 uses 5 for
 *     configuration errors and, with {@code --all-config}, 4 for a missing main file and 6 for a missing include
 * @param output what keepalived printed (its processes repeat some messages)
 */
public record ConfigCheck(int exitCode, String output) {

  /** Whether keepalived accepted the configuration. */
  public boolean valid() {
    return exitCode == 0;
  }

  /** The distinct non-blank lines keepalived printed, in first-seen order. */
  public List<String> messages() {
    return output.lines().map(String::strip).filter(line -> !line.isEmpty()).distinct().toList();
  }
}
