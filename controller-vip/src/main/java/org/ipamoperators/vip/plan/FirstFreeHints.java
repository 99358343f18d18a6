package org.ipamoperators.vip.plan;

import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/**
 * Where a first-free search of a group may start. Without a hint, first-free planning probes past
 * every taken address of the group, so a catch-up of n Services costs n²/2 probes; a hint remembers
 * how far earlier plans found everything taken. A hint only ever skips addresses that were taken
 * when an earlier plan looked at them and have not been freed since (its holder decides, see
 * {@code FirstFreeCursors}); the address chosen is still looked up, and the ledger's claim still
 * decides who holds it.
 */
public interface FirstFreeHints {
  /** One search: where it may start, and what it found. */
  interface Search {
    /** Every usable address of the family below this one is taken; null: start at the first. */
    Ip from();

    /** The search's answer: the lowest address it found free (every usable one below it was taken). */
    void found(Ip ip);
  }

  /** A search of one group's addresses of one family. */
  Search search(GroupInfo group, IpFamily family);

  /** No hints: every search starts at the group's first address (pure planning, {@code ipam plan}). */
  FirstFreeHints NONE = (g, f) -> new Search() {
    @Override
    public Ip from() {
      return null;
    }

    @Override
    public void found(Ip ip) {
    }
  };
}
