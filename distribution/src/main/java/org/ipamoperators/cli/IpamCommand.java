package org.ipamoperators.cli;

import org.ipamoperators.cli.demo.DemoCommand;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.cli.plan.PlanCommand;
import org.ipamoperators.cli.reloader.KeepalivedReloaderCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/** The {@code ipam} command: the suite's entry point. */
@Command(name = "ipam", mixinStandardHelpOptions = true, versionProvider = IpamVersion.class,
    description = "IP address management for Kubernetes and OpenShift clusters.",
    subcommands = {PlanCommand.class, DemoCommand.class, OperatorCommand.class, AuditCommand.class, MigrateCommand.class,
        KeepalivedReloaderCommand.class, CompletionCommand.class,
        CommandLine.HelpCommand.class})
public final class IpamCommand implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** The common fork-join pool's parallelism when none is set. */
  static final String COMMON_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  public static void main(String[] args) {
    // On 2 cores or fewer the common pool has parallelism 1, and CompletableFuture then starts a new thread for
    // each async task: the JDK HTTP client under fabric8 would do so for every API request (docs/benchmarks.md).
    // Set before anything touches the pool; a -D wins.
    if (System.getProperty(COMMON_PARALLELISM) == null && Runtime.getRuntime().availableProcessors() <= 2) {
      System.setProperty(COMMON_PARALLELISM, "2");
    }
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
