package org.ipamoperators.testsupport.netns;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;

/**
 * A named Linux network namespace created by a {@link NetworkLab}, which deletes it. Starts with only {@code lo},
 * set up.
 */
public final class NetworkNamespace {

  private final String name;
  private final String ip;

  NetworkNamespace(String name, String ip) {
    this.name = name;
    this.ip = ip;
  }

  /** The kernel-visible name ({@code ip netns list}), unique per lab and JVM. */
  public String name() {
    return name;
  }

  /** Runs {@code command} inside this namespace ({@code ip netns exec}), with the default timeout. */
  public CommandResult exec(String... command) {
    return exec(Commands.DEFAULT_TIMEOUT, command);
  }

  /** Runs {@code command} inside this namespace ({@code ip netns exec}). */
  public CommandResult exec(Duration timeout, String... command) {
    List<String> full = new ArrayList<>(List.of(ip, "netns", "exec", name));
    full.addAll(List.of(command));
    return Commands.run(full, timeout);
  }

  /** Runs {@code ip -n <this> <args>} and fails if it fails. */
  public CommandResult ip(String... args) {
    List<String> full = new ArrayList<>(List.of(ip, "-n", name));
    full.addAll(List.of(args));
    return Commands.run(full).orThrow();
  }

  /** Adds an address ({@code 192.0.2.1/24}, {@code 2001:db8::1/64}); IPv6 ones skip duplicate detection. */
  public NetworkNamespace addAddress(String interfaceName, String cidr) {
    if (cidr.contains(":")) {
      ip("-6", "address", "add", cidr, "dev", interfaceName, "nodad");
    } else {
      ip("address", "add", cidr, "dev", interfaceName);
    }
    return this;
  }

  /** Sets a link up. */
  public NetworkNamespace up(String interfaceName) {
    ip("link", "set", interfaceName, "up");
    return this;
  }

  /** {@code ip -brief address} of this namespace, for assertions and failure messages. */
  public String addresses() {
    return ip("-brief", "address").stdout();
  }

  /** Pings {@code address} from inside this namespace: {@code count} echo requests, one second apart at most. */
  public CommandResult ping(String address, int count) {
    return exec(Duration.ofSeconds(count + 10L), "ping", address.contains(":") ? "-6" : "-4", "-c",
        Integer.toString(count), "-i", "0.2", "-W", "2", "-n", address);
  }

  @Override
  public String toString() {
    return name;
  }
}
