package org.ipamoperators.core.allocation;

import java.util.ArrayList;
import java.util.List;

/**
 * The free space of one address family as sorted, disjoint, non-adjacent ranges of unsigned 128-bit
 * offsets, in a B+tree whose nodes carry the number of free addresses below them. That gives
 * O(log r) lookup, the k-th free address (uniform random allocation), and splitting or merging of
 * ranges, r being the number of free ranges; the pool itself is never enumerated.
 *
 * <p>Leaves keep primitive arrays, and the high words only once a key needs them, so a pool of at
 * most 2^64 addresses (any IPv4 pool, an IPv6 /64) stores 16 bytes per range plus slack. Not
 * thread-safe: callers serialise access. Lookups leave their answer in {@link #foundStartHi} and
 * friends, to avoid allocating a result per call.
 */
final class FreeRangeTree {
  static final int LEAF_CAPACITY = 64;
  static final int INNER_CAPACITY = 64;

  private abstract static class Node {
    int n;
    long countHi;
    long countLo;

    abstract long minHi();

    abstract long minLo();
  }

  private static final class Leaf extends Node {
    final long[] startLo = new long[LEAF_CAPACITY];
    final long[] endLo = new long[LEAF_CAPACITY];
    long[] startHi; // null while every high word is zero
    long[] endHi;

    long startHi(int i) {
      return startHi == null ? 0 : startHi[i];
    }

    long endHi(int i) {
      return endHi == null ? 0 : endHi[i];
    }

    void set(int i, long sHi, long sLo, long eHi, long eLo) {
      if ((sHi | eHi) != 0 && startHi == null) {
        startHi = new long[LEAF_CAPACITY];
        endHi = new long[LEAF_CAPACITY];
      }
      startLo[i] = sLo;
      endLo[i] = eLo;
      if (startHi != null) {
        startHi[i] = sHi;
        endHi[i] = eHi;
      }
    }

    void shift(int from, int to, int length) {
      System.arraycopy(startLo, from, startLo, to, length);
      System.arraycopy(endLo, from, endLo, to, length);
      if (startHi != null) {
        System.arraycopy(startHi, from, startHi, to, length);
        System.arraycopy(endHi, from, endHi, to, length);
      }
    }

    @Override
    long minHi() {
      return startHi(0);
    }

    @Override
    long minLo() {
      return startLo[0];
    }

    void recount() {
      long hi = 0;
      long lo = 0;
      for (int i = 0; i < n; i++) {
        long sizeLo = endLo[i] - startLo[i] + 1;
        long sizeHi = sizeHi(startHi(i), startLo[i], endHi(i), endLo[i]);
        hi = U128.addHi(hi, lo, sizeHi, sizeLo);
        lo += sizeLo;
      }
      countHi = hi;
      countLo = lo;
    }
  }

  private static final class Inner extends Node {
    final Node[] kids = new Node[INNER_CAPACITY];
    final long[] keyHi = new long[INNER_CAPACITY]; // minimum start of each child, kept exact
    final long[] keyLo = new long[INNER_CAPACITY];

    @Override
    long minHi() {
      return keyHi[0];
    }

    @Override
    long minLo() {
      return keyLo[0];
    }

    void recount() {
      long hi = 0;
      long lo = 0;
      for (int i = 0; i < n; i++) {
        hi = U128.addHi(hi, lo, kids[i].countHi, kids[i].countLo);
        lo += kids[i].countLo;
      }
      countHi = hi;
      countLo = lo;
    }

    void refreshKey(int i) {
      keyHi[i] = kids[i].minHi();
      keyLo[i] = kids[i].minLo();
    }

    /** Index of the last child whose minimum is at most the key, or -1. */
    int route(long hi, long lo) {
      int low = 0;
      int high = n - 1;
      while (low <= high) {
        int mid = (low + high) >>> 1;
        if (U128.compare(keyHi[mid], keyLo[mid], hi, lo) <= 0) {
          low = mid + 1;
        } else {
          high = mid - 1;
        }
      }
      return high;
    }
  }

  private Node root = new Leaf();
  private int rangeCount;

  // The answer of the last successful floor/ceiling/first lookup.
  long foundStartHi;
  long foundStartLo;
  long foundEndHi;
  long foundEndLo;

  // Count change of the mutation in progress (two's complement, 128-bit).
  private long deltaHi;
  private long deltaLo;

  static long sizeHi(long sHi, long sLo, long eHi, long eLo) {
    // (e - s) + 1
    long dHi = U128.subHi(eHi, eLo, sHi, sLo);
    long dLo = eLo - sLo;
    return U128.addHi(dHi, dLo, 0, 1);
  }

  long countHi() {
    return root.countHi;
  }

  long countLo() {
    return root.countLo;
  }

  boolean isEmpty() {
    return root.n == 0;
  }

  int rangeCount() {
    return rangeCount;
  }

  // ---------------------------------------------------------------- lookups

  /** Finds the range with the largest start at most the key. */
  boolean floor(long hi, long lo) {
    Node node = root;
    while (node instanceof Inner inner) {
      int i = inner.route(hi, lo);
      if (i < 0) {
        return false;
      }
      node = inner.kids[i];
    }
    Leaf leaf = (Leaf) node;
    int j = leafRoute(leaf, hi, lo);
    if (j < 0) {
      return false;
    }
    found(leaf, j);
    return true;
  }

  /** Finds the range with the smallest start at least the key. */
  boolean ceiling(long hi, long lo) {
    return ceiling(root, hi, lo);
  }

  private boolean ceiling(Node node, long hi, long lo) {
    if (node instanceof Inner inner) {
      int i = inner.route(hi, lo);
      if (i < 0) {
        return first(inner);
      }
      if (ceiling(inner.kids[i], hi, lo)) {
        return true;
      }
      return i + 1 < inner.n && first(inner.kids[i + 1]);
    }
    Leaf leaf = (Leaf) node;
    int j = leafRoute(leaf, hi, lo);
    if (j >= 0 && leaf.startLo[j] == lo && leaf.startHi(j) == hi) {
      found(leaf, j);
      return true;
    }
    if (j + 1 < leaf.n) {
      found(leaf, j + 1);
      return true;
    }
    return false;
  }

  /** Finds the lowest range. */
  boolean first() {
    return first(root);
  }

  private boolean first(Node node) {
    while (node instanceof Inner inner) {
      node = inner.kids[0];
    }
    if (node.n == 0) {
      return false;
    }
    found((Leaf) node, 0);
    return true;
  }

  private void found(Leaf leaf, int j) {
    foundStartHi = leaf.startHi(j);
    foundStartLo = leaf.startLo[j];
    foundEndHi = leaf.endHi(j);
    foundEndLo = leaf.endLo[j];
  }

  /** Index of the last range whose start is at most the key, or -1. */
  private static int leafRoute(Leaf leaf, long hi, long lo) {
    int low = 0;
    int high = leaf.n - 1;
    if (leaf.startHi == null && hi == 0) {
      while (low <= high) {
        int mid = (low + high) >>> 1;
        if (Long.compareUnsigned(leaf.startLo[mid], lo) <= 0) {
          low = mid + 1;
        } else {
          high = mid - 1;
        }
      }
      return high;
    }
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (U128.compare(leaf.startHi(mid), leaf.startLo[mid], hi, lo) <= 0) {
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return high;
  }

  // ---------------------------------------------------------------- mutations

  /** Inserts a range that is disjoint from, and not adjacent to, every present range. */
  void insert(long sHi, long sLo, long eHi, long eLo) {
    deltaHi = sizeHi(sHi, sLo, eHi, eLo);
    deltaLo = eLo - sLo + 1;
    settleRoot(insert(root, sHi, sLo, eHi, eLo));
    rangeCount++;
  }

  private Node insert(Node node, long sHi, long sLo, long eHi, long eLo) {
    if (node instanceof Leaf leaf) {
      return insertInto(leaf, leafRoute(leaf, sHi, sLo) + 1, sHi, sLo, eHi, eLo);
    }
    Inner inner = (Inner) node;
    int i = Math.max(inner.route(sHi, sLo), 0);
    return afterChild(inner, i, insert(inner.kids[i], sHi, sLo, eHi, eLo));
  }

  /**
   * Puts a range at a position of a leaf, splitting a full leaf. Applies the pending count delta,
   * or recounts both halves after a split; returns the new right half, or null.
   */
  private Leaf insertInto(Leaf leaf, int at, long sHi, long sLo, long eHi, long eLo) {
    if (leaf.n < LEAF_CAPACITY) {
      leaf.shift(at, at + 1, leaf.n - at);
      leaf.set(at, sHi, sLo, eHi, eLo);
      leaf.n++;
      addDelta(leaf);
      return null;
    }
    Leaf right = splitLeaf(leaf, at);
    Leaf target = at <= leaf.n && leaf.n < LEAF_CAPACITY ? leaf : right;
    int j = target == leaf ? at : at - leaf.n;
    target.shift(j, j + 1, target.n - j);
    target.set(j, sHi, sLo, eHi, eLo);
    target.n++;
    leaf.recount();
    right.recount();
    return right;
  }

  /**
   * After child i of an inner node changed: drops it when empty or refreshes its key, applies the
   * pending count delta, and takes in the child's split sibling (splitting this node if full).
   * Returns this node's new right half, or null.
   */
  private Inner afterChild(Inner inner, int i, Node sibling) {
    if (inner.kids[i].n == 0) {
      System.arraycopy(inner.kids, i + 1, inner.kids, i, inner.n - i - 1);
      System.arraycopy(inner.keyHi, i + 1, inner.keyHi, i, inner.n - i - 1);
      System.arraycopy(inner.keyLo, i + 1, inner.keyLo, i, inner.n - i - 1);
      inner.n--;
      inner.kids[inner.n] = null;
    } else {
      inner.refreshKey(i);
    }
    if (sibling == null) {
      addDelta(inner);
      return null;
    }
    int at = i + 1;
    if (inner.n < INNER_CAPACITY) {
      insertChild(inner, at, sibling);
      addDelta(inner);
      return null;
    }
    Inner right = splitInner(inner, at);
    if (at <= inner.n && inner.n < INNER_CAPACITY) {
      insertChild(inner, at, sibling);
    } else {
      insertChild(right, at - inner.n, sibling);
    }
    inner.recount();
    right.recount();
    return right;
  }

  /** Grows the tree by a level when the root split, shrinks it while the root has one child. */
  private void settleRoot(Node sibling) {
    if (sibling != null) {
      Inner newRoot = new Inner();
      newRoot.kids[0] = root;
      newRoot.kids[1] = sibling;
      newRoot.n = 2;
      newRoot.refreshKey(0);
      newRoot.refreshKey(1);
      newRoot.recount();
      root = newRoot;
    }
    while (root instanceof Inner inner && inner.n == 1) {
      root = inner.kids[0];
    }
    if (root instanceof Inner inner && inner.n == 0) {
      root = new Leaf();
    }
  }

  /**
   * Removes one free address, found by rank (the k-th free address, when {@code byRank}) or by value,
   * in a single descent that splits its range when needed. Returns false when, by value, the
   * address is not free. The taken offset is left in {@link #foundStartHi}/{@link #foundStartLo}.
   */
  boolean takeOne(boolean byRank, long hi, long lo) {
    takeFailed = false;
    deltaHi = -1; // one address fewer, in two's complement
    deltaLo = -1;
    Node sibling = takeOne(root, byRank, hi, lo);
    if (takeFailed) {
      return false;
    }
    settleRoot(sibling);
    return true;
  }

  private boolean takeFailed;

  private Node takeOne(Node node, boolean byRank, long hi, long lo) {
    if (node instanceof Inner inner) {
      return takeInInner(inner, byRank, hi, lo);
    }
    Leaf leaf = (Leaf) node;
    int j = byRank ? findRankInLeaf(leaf, hi, lo) : findValueInLeaf(leaf, hi, lo);
    if (j < 0) {
      takeFailed = true;
      return null;
    }
    return takeFromRange(leaf, j, foundStartHi, foundStartLo);
  }

  /** Descends into the kid holding the rank (the rank made relative to it) or the value. */
  private Node takeInInner(Inner inner, boolean byRank, long hi, long lo) {
    int i;
    if (byRank) {
      i = 0;
      boolean narrow = root.countHi == 0; // every count fits in 64 bits: skip the high words
      for (; i < inner.n - 1; i++) {
        Node kid = inner.kids[i];
        if (narrow ? Long.compareUnsigned(lo, kid.countLo) < 0
            : U128.compare(hi, lo, kid.countHi, kid.countLo) < 0) {
          break;
        }
        hi = U128.subHi(hi, lo, kid.countHi, kid.countLo);
        lo -= kid.countLo;
      }
    } else {
      i = inner.route(hi, lo);
      if (i < 0) {
        takeFailed = true;
        return null;
      }
    }
    Node sibling = takeOne(inner.kids[i], byRank, hi, lo);
    return takeFailed ? null : afterChild(inner, i, sibling);
  }

  /** The leaf's range holding the rank-th free address, which goes to {@link #foundStartHi}/{@link #foundStartLo}. */
  private int findRankInLeaf(Leaf leaf, long hi, long lo) {
    int j = 0;
    boolean narrow = root.countHi == 0;
    for (; j < leaf.n - 1; j++) {
      long zLo = leaf.endLo[j] - leaf.startLo[j] + 1;
      if (narrow) {
        if (Long.compareUnsigned(lo, zLo) < 0) {
          break;
        }
        lo -= zLo;
      } else {
        long zHi = sizeHi(leaf.startHi(j), leaf.startLo[j], leaf.endHi(j), leaf.endLo[j]);
        if (U128.compare(hi, lo, zHi, zLo) < 0) {
          break;
        }
        hi = U128.subHi(hi, lo, zHi, zLo);
        lo -= zLo;
      }
    }
    foundStartHi = U128.addHi(leaf.startHi(j), leaf.startLo[j], hi, lo);
    foundStartLo = leaf.startLo[j] + lo;
    return j;
  }

  /** The leaf's range holding the value (then also in {@link #foundStartHi}/{@link #foundStartLo}), or -1. */
  private int findValueInLeaf(Leaf leaf, long hi, long lo) {
    int j = leafRoute(leaf, hi, lo);
    if (j < 0 || U128.compare(leaf.endHi(j), leaf.endLo[j], hi, lo) < 0) {
      return -1;
    }
    foundStartHi = hi;
    foundStartLo = lo;
    return j;
  }

  /** Takes x out of the leaf's range j: the range goes, shrinks at one end, or splits in two. */
  private Node takeFromRange(Leaf leaf, int j, long xHi, long xLo) {
    long sHi = leaf.startHi(j);
    long sLo = leaf.startLo[j];
    long eHi = leaf.endHi(j);
    long eLo = leaf.endLo[j];
    boolean atStart = sLo == xLo && sHi == xHi;
    boolean atEnd = eLo == xLo && eHi == xHi;
    if (atStart && atEnd) {
      leaf.shift(j + 1, j, leaf.n - j - 1);
      leaf.n--;
      rangeCount--;
    } else if (atStart) {
      leaf.set(j, U128.addHi(xHi, xLo, 0, 1), xLo + 1, eHi, eLo);
    } else if (atEnd) {
      leaf.set(j, sHi, sLo, U128.subHi(xHi, xLo, 0, 1), xLo - 1);
    } else {
      leaf.set(j, sHi, sLo, U128.subHi(xHi, xLo, 0, 1), xLo - 1);
      rangeCount++;
      return insertInto(leaf, j + 1, U128.addHi(xHi, xLo, 0, 1), xLo + 1, eHi, eLo);
    }
    addDelta(leaf);
    return null;
  }


  /** Changes the range that starts at the key, keeping it between its neighbours. */
  void replace(long keyHi, long keyLo, long sHi, long sLo, long eHi, long eLo) {
    if (!mutate(root, keyHi, keyLo, false, sHi, sLo, eHi, eLo)) {
      throw new IllegalStateException("no free range starts at the given offset");
    }
  }

  /** Removes the range that starts at the key. */
  void delete(long keyHi, long keyLo) {
    if (!mutate(root, keyHi, keyLo, true, 0, 0, 0, 0)) {
      throw new IllegalStateException("no free range starts at the given offset");
    }
    rangeCount--;
    settleRoot(null);
  }

  private boolean mutate(Node node, long kHi, long kLo, boolean remove,
      long sHi, long sLo, long eHi, long eLo) {
    if (node instanceof Leaf leaf) {
      int j = leafRoute(leaf, kHi, kLo);
      if (j < 0 || leaf.startLo[j] != kLo || leaf.startHi(j) != kHi) {
        return false;
      }
      long oldHi = sizeHi(leaf.startHi(j), leaf.startLo[j], leaf.endHi(j), leaf.endLo[j]);
      long oldLo = leaf.endLo[j] - leaf.startLo[j] + 1;
      if (remove) {
        leaf.shift(j + 1, j, leaf.n - j - 1);
        leaf.n--;
        deltaHi = U128.subHi(0, 0, oldHi, oldLo);
        deltaLo = -oldLo;
      } else {
        leaf.set(j, sHi, sLo, eHi, eLo);
        long newHi = sizeHi(sHi, sLo, eHi, eLo);
        long newLo = eLo - sLo + 1;
        deltaHi = U128.subHi(newHi, newLo, oldHi, oldLo);
        deltaLo = newLo - oldLo;
      }
      addDelta(leaf);
      return true;
    }
    Inner inner = (Inner) node;
    int i = inner.route(kHi, kLo);
    if (i < 0 || !mutate(inner.kids[i], kHi, kLo, remove, sHi, sLo, eHi, eLo)) {
      return false;
    }
    afterChild(inner, i, null);
    return true;
  }

  private void addDelta(Node node) {
    node.countHi = U128.addHi(node.countHi, node.countLo, deltaHi, deltaLo);
    node.countLo += deltaLo;
  }

  // When the insert goes to the far right (ascending fills), keep the left node full.
  private static Leaf splitLeaf(Leaf leaf, int insertAt) {
    int keep = insertAt == leaf.n ? leaf.n : leaf.n / 2;
    Leaf right = new Leaf();
    int moved = leaf.n - keep;
    for (int k = 0; k < moved; k++) {
      right.set(k, leaf.startHi(keep + k), leaf.startLo[keep + k], leaf.endHi(keep + k),
          leaf.endLo[keep + k]);
    }
    right.n = moved;
    leaf.n = keep;
    return right;
  }

  private static Inner splitInner(Inner inner, int insertAt) {
    int keep = insertAt == inner.n ? inner.n : inner.n / 2;
    Inner right = new Inner();
    int moved = inner.n - keep;
    System.arraycopy(inner.kids, keep, right.kids, 0, moved);
    System.arraycopy(inner.keyHi, keep, right.keyHi, 0, moved);
    System.arraycopy(inner.keyLo, keep, right.keyLo, 0, moved);
    java.util.Arrays.fill(inner.kids, keep, inner.n, null);
    right.n = moved;
    inner.n = keep;
    return right;
  }

  private static void insertChild(Inner inner, int at, Node child) {
    System.arraycopy(inner.kids, at, inner.kids, at + 1, inner.n - at);
    System.arraycopy(inner.keyHi, at, inner.keyHi, at + 1, inner.n - at);
    System.arraycopy(inner.keyLo, at, inner.keyLo, at + 1, inner.n - at);
    inner.kids[at] = child;
    inner.n++;
    inner.refreshKey(at);
  }

  // ---------------------------------------------------------------- inspection (tests, reports)

  /** The ranges as {startHi, startLo, endHi, endLo} quadruples, in order. For small trees only. */
  List<long[]> ranges() {
    List<long[]> out = new ArrayList<>();
    collect(root, out);
    return out;
  }

  private static void collect(Node node, List<long[]> out) {
    if (node instanceof Leaf leaf) {
      for (int j = 0; j < leaf.n; j++) {
        out.add(new long[] {leaf.startHi(j), leaf.startLo[j], leaf.endHi(j), leaf.endLo[j]});
      }
      return;
    }
    Inner inner = (Inner) node;
    for (int i = 0; i < inner.n; i++) {
      collect(inner.kids[i], out);
    }
  }
}
