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

  /** keepalived 2.2.7's instance states; anything else it might print is {@link #UNKNOWN}. */
  public enum State {
    INIT, BACKUP, MASTER, FAULT, STOP, DELETED, UNKNOWN;

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
