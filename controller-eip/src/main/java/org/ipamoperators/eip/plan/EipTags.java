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
      tags.put(EipNames.TAG_NODE_SELECTOR, json(selector.node().selector()));
    }
    tags.put(EipNames.TAG_NAME_AWS, "eip-operator:" + cluster + ":" + namespace + ":" + name);
    return tags;
  }

  /** {"k":"v",...} with sorted keys, as serde_json printed the old operator's BTreeMap. */
  static String json(Map<String, String> map) {
    StringBuilder b = new StringBuilder("{");
    new TreeMap<>(map).forEach((k, v) -> {
      if (b.length() > 1) {
        b.append(',');
      }
      b.append(quote(k)).append(':').append(quote(v));
    });
    String s = b.append('}').toString();
    // EC2 tag values are at most 256 characters.
    return s.length() > 256 ? s.substring(0, 256) : s;
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
