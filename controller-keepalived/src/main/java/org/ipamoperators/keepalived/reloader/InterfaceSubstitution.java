package org.ipamoperators.keepalived.reloader;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code interfaceFromIP} on a node: the controller writes a placeholder as the interface of every instance, and the
 * pod replaces exactly those {@code interface <placeholder>} lines (never {@code track_interface} or verbatim lines,
 * which keepalived-operator's line rewriting also hit) with the interface that routes to the address here.
 */
public final class InterfaceSubstitution {
  private static final Pattern DEV = Pattern.compile("\\bdev\\s+(\\S+)");

  private InterfaceSubstitution() {}

  public static String apply(String config, String placeholder, String iface) {
    Pattern line = Pattern.compile("(?m)^(\\s*)interface " + Pattern.quote(placeholder) + "$");
    return line.matcher(config).replaceAll(Matcher.quoteReplacement("") + "$1interface " + Matcher.quoteReplacement(iface));
  }

  /** The interface in the output of {@code ip -o route get <address>}. */
  public static Optional<String> deviceOf(String routeGetOutput) {
    Matcher m = DEV.matcher(routeGetOutput);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }
}
