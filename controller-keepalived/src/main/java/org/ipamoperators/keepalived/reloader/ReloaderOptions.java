package org.ipamoperators.keepalived.reloader;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the reloader works on, as the DaemonSet passes it: {@code --source} (the node's key of the mounted
 * ConfigMap), {@code --target} (the file keepalived reads), {@code --pid-file} (keepalived's; without it nothing is
 * signalled), {@code --interface-from-ip} and {@code --interface-placeholder}, {@code --keepalived} (the binary for
 * {@code --config-test}), {@code --interval} (seconds between looks at the source), {@code --once} (write the first
 * configuration and exit: the init container), {@code --metrics-port} (serve {@code /metrics} there; 0 for none),
 * {@code --states-interval}.
 *
 * @param commandPrefix run before every command (keepalived, ip): empty in a pod, {@code ip netns exec <ns>} in tests
 * @param statesInterval the shortest time between two SIGUSR1 dumps of keepalived's VRRP states ({@link VrrpStates});
 *     a scrape of {@code /metrics} within it gets the last dump's states
 */
public record ReloaderOptions(Path source, Path target, Optional<Path> pidFile, Optional<String> interfaceFromIp,
    String interfacePlaceholder, String keepalived, Duration interval, boolean once, List<String> commandPrefix,
    Duration statesInterval) {

  public ReloaderOptions {
    commandPrefix = List.copyOf(commandPrefix);
    if (source == null || target == null) {
      throw new IllegalArgumentException("--source and --target are required");
    }
    if (statesInterval == null) {
      statesInterval = VrrpStates.DEFAULT_INTERVAL;
    }
    if (statesInterval.isNegative()) {
      throw new IllegalArgumentException("--states-interval must be zero or more: " + statesInterval);
    }
  }

  /** With the default {@code statesInterval}. */
  public ReloaderOptions(Path source, Path target, Optional<Path> pidFile, Optional<String> interfaceFromIp,
      String interfacePlaceholder, String keepalived, Duration interval, boolean once, List<String> commandPrefix) {
    this(source, target, pidFile, interfaceFromIp, interfacePlaceholder, keepalived, interval, once, commandPrefix,
        VrrpStates.DEFAULT_INTERVAL);
  }

  public ReloaderOptions withCommandPrefix(List<String> prefix) {
    return new ReloaderOptions(source, target, pidFile, interfaceFromIp, interfacePlaceholder, keepalived, interval,
        once, prefix, statesInterval);
  }
}
