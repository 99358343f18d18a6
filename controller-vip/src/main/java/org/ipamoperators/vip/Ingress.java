package org.ipamoperators.vip;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * What may be written to a Service's {@code status.loadBalancer.ingress}. The only way to get a new
 * list of addresses is {@link Held#publishable}, which refuses any address the Service does not
 * hold in the ledger, so an unclaimed address can never be published. Besides that,
 * the ingress can be left as it is, or cleared when the Service is no longer ours to serve.
 */
final class Ingress {
  private final List<String> addresses; // null: leave what the Service shows

  private Ingress(List<String> addresses) {
    this.addresses = addresses;
  }

  /** Leave the Service's ingress as it is (only the condition may change). */
  static Ingress unchanged() {
    return new Ingress(null);
  }

  /** No address: for a Service that is no longer ours, whose ingress held only our addresses. */
  static Ingress none() {
    return new Ingress(List.of());
  }

  /** What the Service shows, without {@code gone} (addresses it is about to release). */
  static Ingress without(List<String> current, Set<String> gone) {
    return new Ingress(current.stream().filter(a -> !gone.contains(a)).toList());
  }

  /** For messages: " (ingress [a, b])", or "" when the ingress is left as it is. */
  String describe() {
    return addresses == null ? "" : " (ingress " + addresses + ")";
  }

  /** The addresses to show, or {@code current} when this ingress leaves them unchanged. */
  List<String> or(List<String> current) {
    return addresses == null ? current : addresses;
  }

  /**
   * The addresses a Service holds, and nothing else: those the ledger showed as its own claims (or
   * memberships) when its plan was made, plus those whose claim (or join) the API server just
   * granted it. Built only by the reconcile that made the claims.
   */
  static final class Held {
    private final Set<Ip> addresses = new HashSet<>();

    Held(Iterable<Ip> seenAsOurs) {
      seenAsOurs.forEach(addresses::add);
    }

    /** The API server answered that {@code ip} is this Service's now. */
    void granted(Ip ip) {
      addresses.add(ip);
    }

    boolean holds(Ip ip) {
      return addresses.contains(ip);
    }

    /** The ingress for {@code ips}, when every one of them is held; empty otherwise. */
    Optional<Ingress> publishable(List<Ip> ips) {
      if (!addresses.containsAll(ips)) {
        return Optional.empty();
      }
      return Optional.of(new Ingress(ips.stream().map(Ip::toString).toList()));
    }
  }
}
