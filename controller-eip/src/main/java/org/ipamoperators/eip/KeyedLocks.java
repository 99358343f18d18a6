package org.ipamoperators.eip;

/**
 * Monitors by key over a fixed set of stripes: work on one key is serialised, work on keys of other stripes runs at
 * once, and nothing grows with the number of keys. A caller holds one stripe at a time, so stripes never deadlock.
 */
final class KeyedLocks {
  private final Object[] stripes;

  KeyedLocks(int stripes) {
    this.stripes = new Object[stripes];
    for (int i = 0; i < stripes; i++) {
      this.stripes[i] = new Object();
    }
  }

  Object of(String key) {
    return stripes[Math.floorMod(key.hashCode(), stripes.length)];
  }
}
