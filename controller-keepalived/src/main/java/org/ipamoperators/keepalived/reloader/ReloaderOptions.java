package org.ipamoperators.keepalived.reloader;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the reloader works on, as the DaemonSet passes it: {@code --source} (the node's key of the mounted
 * ConfigMap), {@code --target} (the file keepalived reads), {@code --pid-file} (keepalived's; without it nothing is
 * signalled), {@code --interface-from-ip} and {@code --interface-placeholder}, {@code --keepalived} (the binary for
 * {@code --config-test}), {@code --interval} (seconds between looks at the source), {@code --once} (write the first
 * configuration and exit: the init container), {@code --metrics-port} (serve {@code /metrics} there; 0 for none).
 *
 * @param commandPrefix run before every command (keepalived, ip): empty in a pod, {@code ip netns exec <ns>} in tests
 */
public record ReloaderOptions(Path source, Path target, Optional<Path> pidFile, Optional<String> interfaceFromIp,
    String interfacePlaceholder, String keepalived, Duration interval, boolean once, List<String> commandPrefix,
    int metricsPort) {

  public ReloaderOptions {
    commandPrefix = List.copyOf(commandPrefix);
    if (source == null || target == null) {
      throw new IllegalArgumentException("--source and --target are required");
    }
  }

  public static ReloaderOptions parse(List<String> args) {
    Path source = null;
    Path target = null;
    Optional<Path> pid = Optional.empty();
    Optional<String> fromIp = Optional.empty();
    String placeholder = "ipam-from-ip";
    String keepalived = "keepalived";
    Duration interval = Duration.ofSeconds(1);
    boolean once = false;
    int metricsPort = 0;
    List<String> unknown = new ArrayList<>();
    for (String arg : args) {
      String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : "";
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      switch (name) {
        case "--source" -> source = Path.of(value);
        case "--target" -> target = Path.of(value);
        case "--pid-file" -> pid = Optional.of(Path.of(value));
        case "--interface-from-ip" -> fromIp = Optional.of(value);
        case "--interface-placeholder" -> placeholder = value;
        case "--keepalived" -> keepalived = value;
        case "--interval" -> interval = Duration.ofMillis((long) (Double.parseDouble(value) * 1000));
        case "--once" -> once = true;
        case "--metrics-port" -> metricsPort = Integer.parseInt(value);
        default -> unknown.add(arg);
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("unknown arguments: " + unknown);
    }
    return new ReloaderOptions(source, target, pid, fromIp, placeholder, keepalived, interval, once, List.of(),
        metricsPort);
  }

  public ReloaderOptions withCommandPrefix(List<String> prefix) {
    return new ReloaderOptions(source, target, pidFile, interfaceFromIp, interfacePlaceholder, keepalived, interval,
        once, prefix, metricsPort);
  }
}
