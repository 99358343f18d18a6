package org.ipamoperators.keepalived.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The keepalived.conf of one node and the notices its rendering produced.
 *
 * @param node the node name
 * @param text the configuration
 * @param notices what the user should know, in a stable order
 */
public record RenderedConfig(String node, String text, List<Notice> notices) {

  public RenderedConfig {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(text, "text");
    notices = List.copyOf(notices);
  }

  /** SHA-256 of the text, hex: equal configurations have equal digests (for change detection, annotations). */
  public String sha256() {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
