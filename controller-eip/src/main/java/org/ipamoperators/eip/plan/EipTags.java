package org.ipamoperators.eip.plan;

import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;

/** The tags an Eip's address carries, exactly as k8s-eip-operator wrote them (plus the default tags). */
public final class EipTags {
  private EipTags() {}

  public static Map<String, String> of(String cluster, String namespace, String name, String uid,
      EipSelector selector, Map<String, String> defaultTags) {
    Map<String, String> tags = new TreeMap<>(defaultTags);
    tags.put(EipNames.TAG_UID, uid);
    tags.put(EipNames.TAG_NAME, name);
    tags.put(EipNames.TAG_NAMESPACE, namespace);
    tags.put(EipNames.TAG_CLUSTER, cluster);
    if (selector != null && selector.pod() != null) {
      tags.put(EipNames.TAG_POD, selector.pod().podName());
    } else if (selector != null && selector.node() != null) {
      tags.put(EipNames.TAG_NODE_SELECTOR, selectorTag(selector.node().selector()));
    }
    tags.put(EipNames.TAG_NAME_AWS, "eip-operator:" + cluster + ":" + namespace + ":" + name);
    return tags;
  }

  /** EC2's limit on a tag value, in characters. */
  static final int MAX_VALUE = 256;
  /** The entry closing a selector cut to fit a tag: its value says how many entries were left out. */
  static final String TRUNCATED_KEY = "...";

  /**
   * {"k":"v",...} with sorted keys, as serde_json printed the old operator's BTreeMap. Longer than a tag takes (the
   * old operator's AllocateAddress failed then): the entries that fit, in key order, then {@code "...":"+N"}, so
   * the value stays JSON that names what it shows and that something is missing.
   */
  static String selectorTag(Map<String, String> selector) {
    String full = json(selector);
    if (full.length() <= MAX_VALUE) {
      return full;
    }
    Map<String, String> shown = new TreeMap<>();
    for (Map.Entry<String, String> e : new TreeMap<>(selector).entrySet()) {
      shown.put(e.getKey(), e.getValue());
      String marker = quote(TRUNCATED_KEY) + ":" + quote("+" + (selector.size() - shown.size()));
      if (json(shown).length() + 1 + marker.length() > MAX_VALUE) {
        shown.remove(e.getKey());
        break;
      }
    }
    String b = json(shown);
    String marker = quote(TRUNCATED_KEY) + ":" + quote("+" + (selector.size() - shown.size()));
    return b.substring(0, b.length() - 1) + (shown.isEmpty() ? "" : ",") + marker + "}";
  }

  /** {"k":"v",...} with sorted keys, whatever its length. */
  static String json(Map<String, String> map) {
    StringBuilder b = new StringBuilder("{");
    new TreeMap<>(map).forEach((k, v) -> {
      if (b.length() > 1) {
        b.append(',');
      }
      b.append(quote(k)).append(':').append(quote(v));
    });
    return b.append('}').toString();
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
