package org.ipamoperators.vip.plan;

import java.util.AbstractMap;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.ipamoperators.core.address.Ip;

/**
 * The addresses others hold, as the planner's {@code taken} map, without copying the ledger: a
 * view that looks each address up when asked. The planner only asks about the addresses it
 * considers, so a plan costs what it looks at, not the size of the ledger. Iterating the view
 * (for messages and tests) walks the whole ledger.
 */
public final class Taken extends AbstractMap<Ip, String> {
  private final Function<Ip, Optional<LedgerEntry>> lookup;
  private final Supplier<Collection<LedgerEntry>> all;
  private final Set<Ip> own;
  private final java.util.function.Predicate<LedgerEntry> mine;
  private final Map<Ip, String> lost;

  /**
   * @param lookup the ledger entry of an address
   * @param all every ledger entry (only for iteration)
   * @param own addresses that are not taken for this Service (it holds them, or may join them)
   * @param mine entries that are never taken for this Service whenever the view sees them: its own
   *     claims and its sharing key's (the ledger may show one only after {@code own} was computed;
   *     planning may then offer it, and the claim or join finds it the Service's)
   * @param lost addresses this Service just failed to claim, with their holder
   */
  public Taken(Function<Ip, Optional<LedgerEntry>> lookup, Supplier<Collection<LedgerEntry>> all, Set<Ip> own,
      java.util.function.Predicate<LedgerEntry> mine, Map<Ip, String> lost) {
    this.lookup = lookup;
    this.all = all;
    this.own = own;
    this.mine = mine;
    this.lost = lost;
  }

  @Override
  public boolean containsKey(Object key) {
    if (!(key instanceof Ip ip)) {
      return false;
    }
    if (lost.containsKey(ip)) {
      return true;
    }
    return !own.contains(ip) && lookup.apply(ip).filter(e -> !mine.test(e)).isPresent();
  }

  @Override
  public String get(Object key) {
    if (!(key instanceof Ip ip)) {
      return null;
    }
    String l = lost.get(ip);
    if (l != null) {
      return l;
    }
    if (own.contains(ip)) {
      return null;
    }
    return lookup.apply(ip).filter(e -> !mine.test(e)).map(LedgerEntry::describe).orElse(null);
  }

  @Override
  public Set<Entry<Ip, String>> entrySet() {
    Map<Ip, String> out = new HashMap<>(lost);
    for (LedgerEntry e : all.get()) {
      if (!own.contains(e.ip()) && !mine.test(e)) {
        out.putIfAbsent(e.ip(), e.describe());
      }
    }
    return out.entrySet();
  }
}
