package org.ipamoperators.controller.common.ledger;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.ipamoperators.core.address.Ip;

/**
 * Object names and label values derived from addresses and pools. An IPv4 claim is named after the
 * address itself; IPv6 uses the full eight-group form with dashes (colons are not allowed in names,
 * and the compressed form could start or end with a dash).
 */
public final class ClaimNames {
  private ClaimNames() {}

  public static String of(Ip ip) {
    if (ip.isIPv4()) {
      return ip.toString();
    }
    StringBuilder b = new StringBuilder(39);
    for (int i = 0; i < 8; i++) {
      long word = i < 4 ? ip.hi() : ip.lo();
      int shift = 48 - 16 * (i % 4);
      if (i > 0) {
        b.append('-');
      }
      b.append(String.format("%04x", (word >>> shift) & 0xffff));
    }
    return b.toString();
  }

  /** A valid label value for any text: itself when it fits, else a readable prefix and a hash. */
  public static String labelValue(String text) {
    if (text.length() <= 63 && text.matches("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")) {
      return text;
    }
    String clean = text.replaceAll("[^-A-Za-z0-9_.]", "-");
    String hash = hash(text);
    String prefix = clean.substring(0, Math.min(clean.length(), 63 - hash.length() - 1));
    prefix = prefix.replaceAll("^[^A-Za-z0-9]+", "");
    return prefix.isEmpty() ? hash : prefix + "-" + hash;
  }

  private static String hash(String text) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 5);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
