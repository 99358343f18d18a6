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
  private final Map<Ip, String> lost;

  /**
   * @param lookup the ledger entry of an address
   * @param all every ledger entry (only for iteration)
   * @param own addresses that are not taken for this Service (it holds them, or may join them)
   * @param lost addresses this Service just failed to claim, with their holder
   */
  public Taken(Function<Ip, Optional<LedgerEntry>> lookup, Supplier<Collection<LedgerEntry>> all, Set<Ip> own,
      Map<Ip, String> lost) {
    this.lookup = lookup;
    this.all = all;
    this.own = own;
    this.lost = lost;
  }

  @Override
  public boolean containsKey(Object key) {
    return get(key) != null;
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
    return lookup.apply(ip).map(LedgerEntry::describe).orElse(null);
  }

  @Override
  public Set<Entry<Ip, String>> entrySet() {
    Map<Ip, String> out = new HashMap<>(lost);
    for (LedgerEntry e : all.get()) {
      if (!own.contains(e.ip())) {
        out.putIfAbsent(e.ip(), e.describe());
      }
    }
    return out.entrySet();
  }
}
