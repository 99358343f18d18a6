package org.ipamoperators.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code ipam} command: the suite's entry point. */
@Command(name = "ipam", mixinStandardHelpOptions = true, version = "ipam 0.1.0",
    description = "IP address management for Kubernetes and OpenShift clusters.",
    subcommands = {PlanCommand.class, DemoCommand.class, OperatorCommand.class, AuditCommand.class,
        KeepalivedReloaderCommand.class,
        CommandLine.HelpCommand.class})
public final class IpamCommand implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The configured command line; tests run it with their own output streams. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new IpamCommand());
    // Unexpected failures become one line on stderr, not a stack trace; exit 2 like bad input.
    cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("ipam: " + e);
      return 2;
    });
    return cl;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
