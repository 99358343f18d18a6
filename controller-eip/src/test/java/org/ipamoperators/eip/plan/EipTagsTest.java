package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.junit.jupiter.api.Test;

class EipTagsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String selectorTag(Map<String, String> selector) {
    return EipTags.of("c", "ns", "e", "uid", EipSelector.node(selector), Map.of()).get(EipNames.TAG_NODE_SELECTOR);
  }

  private static Map<String, String> parse(String json) throws Exception {
    return JSON.readValue(json, new TypeReference<Map<String, String>>() {});
  }

  @Test
  void aShortSelectorIsItsJsonWithSortedKeysAsTheOldOperatorWroteIt() throws Exception {
    assertThat(selectorTag(Map.of("role", "egress", "az", "a\"b"))).isEqualTo("{\"az\":\"a\\\"b\",\"role\":\"egress\"}");
  }

  /** EC2 takes 256 characters: a longer selector is cut at whole entries with a marker, never into broken JSON. */
  @Test
  void aSelectorTooLongForATagStaysValidJsonWithinTheLimit() throws Exception {
    for (long s = 1; s <= 300; s++) {
      long seed = s;
      Random r = new Random(seed);
      Map<String, String> selector = new TreeMap<>();
      int entries = 1 + r.nextInt(12);
      for (int i = 0; i < entries; i++) {
        selector.put("example.com/" + "k".repeat(r.nextInt(60)) + i, "v\"\\".repeat(r.nextInt(22)));
      }
      String tag = selectorTag(selector);
      assertThat(tag.length()).as("seed %d", seed).isLessThanOrEqualTo(256);
      Map<String, String> parsed = parse(tag);
      String full = EipTags.json(selector);
      if (full.length() <= 256) {
        assertThat(parsed).as("seed %d", seed).isEqualTo(selector);
      } else {
        String more = parsed.remove(EipTags.TRUNCATED_KEY);
        assertThat(more).as("seed %d", seed).isEqualTo("+" + (selector.size() - parsed.size()));
        parsed.forEach((k, v) -> assertThat(selector).as("seed %d", seed).containsEntry(k, v));
      }
    }
  }
}
