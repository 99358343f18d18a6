package org.ipamoperators.keepalived.reloader;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One VRRP instance as the running keepalived reports it in its data dump.
 *
 * @param name the {@code vrrp_instance} name (e.g. {@code shop/web}, {@code shop/web/ipv6})
 * @param state what keepalived says the instance is now
 * @param virtualRouterId the VRID (1-255)
 * @param networkInterface the interface the instance runs on, when the dump names one
 */
public record VrrpInstanceState(String name, State state, int virtualRouterId, Optional<String> networkInterface) {

  /**
   * keepalived 2.2.7's instance states; anything else it might print is {@link #UNKNOWN}. {@link #code()} is
   * keepalived's own number for the state (RFC 2338's 0-3, its own 97 and 98), the value keepalived exporters give
   * their {@code keepalived_vrrp_state} gauge; -1 for UNKNOWN.
   */
  public enum State {
    INIT(0), BACKUP(1), MASTER(2), FAULT(3), STOP(98), DELETED(97), UNKNOWN(-1);

    private final int code;

    State(int code) {
      this.code = code;
    }

    public int code() {
      return code;
    }

    static State of(String text) {
      try {
        return valueOf(text.strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        return UNKNOWN;
      }
    }
  }

  public VrrpInstanceState {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(networkInterface, "networkInterface");
  }
}
