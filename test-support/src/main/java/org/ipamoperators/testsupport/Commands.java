package org.ipamoperators.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** Runs short external commands to completion, with a timeout, capturing both output streams. */
public final class Commands {

  /** The timeout {@link #run(List)} uses. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  /** Output readers block, so they get their own threads rather than the (small) common pool. */
  private static final ExecutorService DRAINERS = Executors.newCachedThreadPool(runnable -> {
    Thread thread = new Thread(runnable, "test-support-command-output");
    thread.setDaemon(true);
    return thread;
  });

  private Commands() {
  }

  public static CommandResult run(String... command) {
    return run(List.of(command), DEFAULT_TIMEOUT);
  }

  public static CommandResult run(List<String> command) {
    return run(command, DEFAULT_TIMEOUT);
  }

  /**
   * Runs {@code command} with standard input closed. A command still running after {@code timeout} is killed
   * and reported as an {@link IllegalStateException}.
   */
  public static CommandResult run(List<String> command, Duration timeout) {
    Process process;
    try {
      process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + String.join(" ", command), e);
    }
    CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> drain(process.getInputStream()), DRAINERS);
    CompletableFuture<String> stderr = CompletableFuture.supplyAsync(() -> drain(process.getErrorStream()), DRAINERS);
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout);
      }
      return new CommandResult(command, process.exitValue(), stdout.get(5, TimeUnit.SECONDS),
          stderr.get(5, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IllegalStateException("Interrupted while running " + String.join(" ", command), e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("Cannot read the output of " + String.join(" ", command), e);
    }
  }

  private static String drain(InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
