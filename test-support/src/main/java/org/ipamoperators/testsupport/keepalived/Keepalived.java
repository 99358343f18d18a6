package org.ipamoperators.testsupport.keepalived;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.netns.NetworkNamespace;

/**
 * Checks rendered keepalived configurations with the real keepalived ({@code --config-test}).
 *
 * <p>keepalived checks interfaces against the network namespace it runs in (a {@code vrrp_instance} on a
 * missing interface, or on {@code lo}, is an error), so a configuration naming node interfaces is best checked
 * inside a {@link NetworkNamespace} that has them. {@code --all-config} is always passed: without it keepalived
 * 2.2.7 exits 0 when the file or an included file is missing.
 */
public final class Keepalived {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Path binary;

  private Keepalived(Path binary) {
    this.binary = binary;
  }

  /** The keepalived from {@code $IPAM_KEEPALIVED} or PATH; fails with setup instructions if there is none. */
  public static Keepalived locate() {
    return new Keepalived(TestBinaries.fromEnvironment().keepalived());
  }

  public Path binary() {
    return binary;
  }

  /** Checks a configuration file in the current network namespace. */
  public ConfigCheck checkConfig(Path file) {
    return toCheck(Commands.run(command(file), TIMEOUT));
  }

  /** Checks configuration text (written to a temporary file) in the current network namespace. */
  public ConfigCheck checkConfig(String config) {
    return withTempFile(config, this::checkConfig);
  }

  /** Checks configuration text inside {@code namespace}, where its interfaces must exist. */
  public ConfigCheck checkConfig(String config, NetworkNamespace namespace) {
    return withTempFile(config, file -> toCheck(namespace.exec(TIMEOUT, command(file).toArray(String[]::new))));
  }

  private List<String> command(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("No keepalived configuration at " + file);
    }
    return List.of(binary.toString(), "--config-test", "--all-config", "--use-file=" + file.toAbsolutePath());
  }

  private static ConfigCheck toCheck(CommandResult result) {
    return new ConfigCheck(result.exitCode(), result.output());
  }

  private static ConfigCheck withTempFile(String config, java.util.function.Function<Path, ConfigCheck> check) {
    Path file = null;
    try {
      file = Files.createTempFile("ipam-keepalived-", ".conf");
      Files.writeString(file, config, StandardCharsets.UTF_8);
      return check.apply(file);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write a keepalived configuration", e);
    } finally {
      if (file != null) {
        try {
          Files.deleteIfExists(file);
        } catch (IOException e) {
          // a leftover temp file is harmless
        }
      }
    }
  }
}
