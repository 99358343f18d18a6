package org.ipamoperators.keepalived.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Rules for verbatim {@code key value} lines ({@code verbatimConfig} of the group, the
 * {@code keepalived-operator.redhat-cop.io/verbatimconfig} annotation of a service).
 *
 * <p>Each entry becomes exactly one line inside its block, never more: keys are keepalived keywords
 * ({@code [a-z][a-z0-9_]*}) and values cannot contain line breaks, braces or comment characters, so an entry can
 * neither close the block it sits in nor open another one. Keys the renderer writes itself (managed keys) are
 * refused rather than emitted twice, which keepalived-operator did (its issue #26). A service's entries run with
 * the keepalived of every node, as root: keys that run programs ({@code notify*}, anything with {@code script})
 * and {@code include} are refused there.
 */
public final class Verbatim {

  /**
   * The longest verbatimconfig annotation a service may carry: its lines go into the configuration of every node
   * of the group, and a few keywords need far less; a longer one is refused whole, with this reason.
   */
  public static final int MAX_SERVICE_ANNOTATION = 512;

  private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9_]*");

  /** Keys the renderer writes in {@code global_defs}. */
  public static final Set<String> MANAGED_GLOBAL_KEYS = Set.of("router_id", "enable_script_security", "script_user");

  /** Keys the renderer writes in every {@code vrrp_instance} (or decides to leave out). */
  public static final Set<String> MANAGED_INSTANCE_KEYS = Set.of("state", "interface", "virtual_router_id", "version",
      "priority", "advert_int", "nopreempt", "preempt", "preempt_delay", "unicast_src_ip", "unicast_peer",
      "authentication", "track_script", "virtual_ipaddress", "virtual_ipaddress_excluded");

  private Verbatim() {
  }

  /** One refused entry and why. */
  public record Rejection(String key, String reason) {
    @Override
    public String toString() {
      return "'" + key + "': " + reason;
    }
  }

  /** The accepted entries of a verbatim map, sorted by key, and the refused ones. */
  public record Checked(SortedMap<String, String> accepted, List<Rejection> rejected) {
    public Checked {
      accepted = Collections.unmodifiableSortedMap(new TreeMap<>(accepted));
      rejected = List.copyOf(rejected);
    }
  }

  /** Checks group-level entries (rendered inside {@code global_defs}). */
  public static Checked checkGlobal(Map<String, String> entries) {
    return check(entries, MANAGED_GLOBAL_KEYS, false);
  }

  /** The keys of {@code entries} that run programs ({@code notify*}, anything with {@code script}), sorted. */
  public static java.util.SortedSet<String> programKeys(Map<String, String> entries) {
    java.util.SortedSet<String> out = new java.util.TreeSet<>();
    for (String key : entries.keySet()) {
      if (runsPrograms(key)) {
        out.add(key);
      }
    }
    return out;
  }

  private static boolean runsPrograms(String key) {
    return key.startsWith("notify") || key.contains("script");
  }

  /** Checks service-level entries (rendered inside that service's {@code vrrp_instance}). */
  public static Checked checkService(Map<String, String> entries) {
    return check(entries, MANAGED_INSTANCE_KEYS, true);
  }

  private static Checked check(Map<String, String> entries, Set<String> managed, boolean untrusted) {
    SortedMap<String, String> accepted = new TreeMap<>();
    List<Rejection> rejected = new ArrayList<>();
    for (Map.Entry<String, String> entry : new TreeMap<>(entries).entrySet()) {
      String key = entry.getKey();
      String value = entry.getValue() == null ? "" : entry.getValue().strip();
      String reason = keyProblem(key, managed, untrusted);
      if (reason == null) {
        reason = valueProblem(value);
      }
      if (reason == null) {
        accepted.put(key, value);
      } else {
        rejected.add(new Rejection(key, reason));
      }
    }
    return new Checked(accepted, rejected);
  }

  private static String keyProblem(String key, Set<String> managed, boolean untrusted) {
    if (!KEY.matcher(key).matches()) {
      return "not a keepalived keyword (lower case letters, digits and '_')";
    }
    if (managed.contains(key)) {
      return "managed by the operator";
    }
    if (key.equals("include")) {
      return "includes are not allowed";
    }
    if (untrusted && runsPrograms(key)) {
      return "runs programs on the nodes; only the group may configure that";
    }
    return null;
  }

  private static String valueProblem(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return "line breaks and control characters are not allowed";
      }
      if (c == '{' || c == '}') {
        return "braces are not allowed (an entry is one line; blocks cannot be opened or closed)";
      }
      if (c == '#' || c == '!') {
        return "'#' and '!' start a comment in keepalived.conf";
      }
    }
    long quotes = value.chars().filter(c -> c == '"').count();
    if (quotes != 0 && !(quotes == 2 && value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))) {
      return "a value may only be quoted as a whole (\"...\")";
    }
    return null;
  }
}
