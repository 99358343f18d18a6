package org.ipamoperators.vip;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.plan.FirstFreeHints;
import org.ipamoperators.vip.plan.GroupInfo;

/**
 * First-free hints from the claim index: per group (its name and spec: a changed spec starts over)
 * and family, the lowest address the last search found free, valid only while the index has not
 * stopped recording any address since that search began ({@link ClaimIndex#removals}). The index
 * only grows between removals, so every address the search passed over is still recorded then:
 * still taken. Any delete or dropped reservation, anywhere, sends the next search back to the
 * group's first address. Makes a catch-up's planning linear in the Services instead of quadratic.
 */
final class FirstFreeCursors implements FirstFreeHints {
  private record Key(GroupInfo group, IpFamily family) {}

  private record Cursor(long removals, Ip next) {}

  private final ClaimIndex index;
  private final Map<Key, Cursor> cursors = new ConcurrentHashMap<>();

  FirstFreeCursors(ClaimIndex index) {
    this.index = index;
  }

  @Override
  public Search search(GroupInfo group, IpFamily family) {
    Key key = new Key(group, family);
    long at = index.removals(); // read before the search looks at anything
    Cursor c = cursors.get(key);
    Ip from = c != null && c.removals() == at && (at & 1) == 0 ? c.next() : null;
    return new Search() {
      @Override
      public Ip from() {
        return from;
      }

      @Override
      public void found(Ip ip) {
        if ((at & 1) != 0) {
          return; // a removal was under way when the search began
        }
        // Keeps the furthest of concurrent searches begun under the same count: all their passes hold.
        cursors.merge(key, new Cursor(at, ip), (old, mine) -> old.removals() > at
            || (old.removals() == at && old.next().compareTo(ip) > 0) ? old : mine);
      }
    };
  }
}
