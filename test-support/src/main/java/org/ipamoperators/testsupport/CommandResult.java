package org.ipamoperators.testsupport;

import java.util.List;

/**
 * The outcome of a finished external command.
 *
 * @param command the command line that ran
 * @param exitCode its exit status
 * @param stdout what it wrote to standard output
 * @param stderr what it wrote to standard error
 */
public record CommandResult(List<String> command, int exitCode, String stdout, String stderr) {

  public CommandResult {
    command = List.copyOf(command);
  }

  /** Whether the command exited with status 0. */
  public boolean succeeded() {
    return exitCode == 0;
  }

  /** Standard output followed by standard error. */
  public String output() {
    if (stdout.isEmpty()) {
      return stderr;
    }
    if (stderr.isEmpty()) {
      return stdout;
    }
    return stdout + (stdout.endsWith("\n") ? "" : "\n") + stderr;
  }

  /** This result if the command succeeded, else an exception that carries its output. */
  public CommandResult orThrow() {
    if (!succeeded()) {
      throw new IllegalStateException(this.toString());
    }
    return this;
  }

  @Override
  public String toString() {
    return String.join(" ", command) + " exited with " + exitCode + (output().isBlank() ? "" : ":\n" + output().strip());
  }
}
