package org.ipamoperators.testsupport.arm;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** An address prefix such as {@code 10.0.1.0/24} or {@code 2001:db8::/64}, for the ARM server's checks. */
record Cidr(String text, BigInteger base, int prefix, boolean v4) {

  static Cidr parse(String text) {
    int slash = text.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("not a prefix: " + text);
    }
    BigInteger addr = toNumber(text.substring(0, slash));
    boolean v4 = !text.contains(":");
    int bits = v4 ? 32 : 128;
    int prefix = Integer.parseInt(text.substring(slash + 1));
    BigInteger mask = BigInteger.ONE.shiftLeft(bits - prefix).subtract(BigInteger.ONE);
    return new Cidr(text, addr.andNot(mask), prefix, v4);
  }

  static BigInteger toNumber(String ip) {
    try {
      return new BigInteger(1, InetAddress.getByName(ip.trim()).getAddress());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an address: " + ip, e);
    }
  }

  static boolean isAddress(String ip) {
    if (ip == null || ip.isBlank() || !(ip.contains(".") || ip.contains(":")) || ip.contains("/")) {
      return false;
    }
    try {
      // literal only: no name lookups
      if (!ip.contains(":") && !ip.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
        return false;
      }
      toNumber(ip);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  static String toText(BigInteger n, boolean v4) {
    byte[] raw = n.toByteArray();
    byte[] out = new byte[v4 ? 4 : 16];
    int copy = Math.min(raw.length, out.length);
    System.arraycopy(raw, raw.length - copy, out, out.length - copy, copy);
    try {
      String s = InetAddress.getByAddress(out).getHostAddress();
      return v4 ? s : compress(s);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  /** RFC 5952 form of a Java IPv6 text (Java prints every group). */
  private static String compress(String full) {
    String[] g = full.split(":");
    StringBuilder sb = new StringBuilder();
    int bestStart = -1;
    int bestLen = 0;
    for (int i = 0; i < g.length; ) {
      if (Integer.parseInt(g[i], 16) == 0) {
        int j = i;
        while (j < g.length && Integer.parseInt(g[j], 16) == 0) {
          j++;
        }
        if (j - i > bestLen && j - i > 1) {
          bestStart = i;
          bestLen = j - i;
        }
        i = j;
      } else {
        i++;
      }
    }
    for (int i = 0; i < g.length; i++) {
      if (i == bestStart) {
        sb.append(i == 0 ? "::" : ":");
        i += bestLen - 1;
        continue;
      }
      sb.append(Integer.toHexString(Integer.parseInt(g[i], 16)));
      if (i < g.length - 1) {
        sb.append(':');
      }
    }
    return sb.toString();
  }

  int bits() {
    return v4 ? 32 : 128;
  }

  BigInteger last() {
    return base.add(BigInteger.ONE.shiftLeft(bits() - prefix)).subtract(BigInteger.ONE);
  }

  boolean contains(String ip) {
    if (ip.contains(":") == v4) {
      return false;
    }
    BigInteger n = toNumber(ip);
    return n.compareTo(base) >= 0 && n.compareTo(last()) <= 0;
  }

  /** The first four and the last address: what Azure keeps in every subnet. */
  boolean reserved(String ip) {
    BigInteger n = toNumber(ip);
    return n.subtract(base).compareTo(BigInteger.valueOf(4)) < 0 || n.equals(last());
  }

  BigInteger size() {
    return BigInteger.ONE.shiftLeft(bits() - prefix);
  }
}
