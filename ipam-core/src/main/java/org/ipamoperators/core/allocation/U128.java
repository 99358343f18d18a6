package org.ipamoperators.core.allocation;

import java.math.BigInteger;

/**
 * Unsigned 128-bit arithmetic on (hi, lo) long pairs. IPv6 offsets and free counts do not fit in a
 * long, and boxing them as {@link BigInteger} would cost the allocator its speed and its memory
 * budget, so the hot paths keep two primitives and use these helpers.
 */
final class U128 {
  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);
  private static final BigInteger MASK_64 = TWO_64.subtract(BigInteger.ONE);

  private U128() {}

  static int compare(long aHi, long aLo, long bHi, long bLo) {
    int c = Long.compareUnsigned(aHi, bHi);
    return c != 0 ? c : Long.compareUnsigned(aLo, bLo);
  }

  /** High word of a + b (the low word is simply {@code aLo + bLo}). */
  static long addHi(long aHi, long aLo, long bHi, long bLo) {
    return aHi + bHi + (Long.compareUnsigned(aLo + bLo, aLo) < 0 ? 1 : 0);
  }

  /** High word of a - b (the low word is simply {@code aLo - bLo}). */
  static long subHi(long aHi, long aLo, long bHi, long bLo) {
    return aHi - bHi - (Long.compareUnsigned(aLo, bLo) < 0 ? 1 : 0);
  }

  static BigInteger toBigInteger(long hi, long lo) {
    return new BigInteger(1, toBytes(hi, lo));
  }

  static long hiOf(BigInteger v) {
    return v.shiftRight(64).longValue();
  }

  static long loOf(BigInteger v) {
    return v.and(MASK_64).longValue();
  }

  private static byte[] toBytes(long hi, long lo) {
    byte[] b = new byte[16];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (hi >>> (56 - 8 * i));
      b[8 + i] = (byte) (lo >>> (56 - 8 * i));
    }
    return b;
  }
}
