package org.ipamoperators.testsupport.corpus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Role;
import org.junit.jupiter.api.Test;

class BadInputCorpusTest {
  private static final String FILE = """
      # a header comment, then a support object
      apiVersion: v1
      kind: Node
      metadata:
        name: n1
      ---
      # good: served beside the bad ones
      apiVersion: v1
      kind: Namespace
      metadata:
        name: ok
      ---
      # wrong: a huge annotation
      # expect: event=Rejected condition=Ready:InvalidSpec
      apiVersion: v1
      kind: Namespace
      metadata:
        name: big
        annotations:
          a: "${repeat:ab:3}"
      ---
      # only a comment: no document
      """;

  @Test
  void rolesExpectationsAndRepeatsAreRead() {
    List<Entry> entries = BadInputCorpus.parse("f.yaml", FILE);
    assertThat(entries).extracting(Entry::role).containsExactly(Role.SUPPORT, Role.GOOD, Role.BAD);
    Entry bad = entries.get(2);
    assertThat(bad.description()).isEqualTo("a huge annotation");
    assertThat(bad.expect("event")).isEqualTo("Rejected");
    assertThat(bad.expect("condition")).isEqualTo("Ready:InvalidSpec");
    assertThat(bad.object().getMetadata().getAnnotations()).containsEntry("a", "ababab");
    assertThat(bad.name()).isEqualTo("big");
    assertThat(entries.get(1).description()).isEqualTo("served beside the bad ones");
  }

  @Test
  void aBadCaseWithoutExpectationOrWithAMalformedOneIsRefused() {
    assertThatThrownBy(() -> BadInputCorpus.parse("f.yaml", "# wrong: x\nkind: Node\n"))
        .hasMessageContaining("needs an '# expect:' line");
    assertThatThrownBy(() -> BadInputCorpus.parse("f.yaml", "# wrong: x\n# expect: Rejected\nkind: Node\n"))
        .hasMessageContaining("is not key=value");
  }
}
