package org.ipamoperators.controller.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Our writes over a lagging informer: newer wins, deletions hide, objects we only patch vanish with the
 * informer's; an event that only brings back our write is an echo, once; entries are forgotten after their time.
 */
class OwnWritesTest {
  private final AtomicLong now = new AtomicLong();

  private OwnWrites<ConfigMap> writes(boolean patchedOnly) {
    return new OwnWrites<>(UnaryOperator.identity(), patchedOnly, Duration.ofSeconds(30), now::get);
  }

  private static ConfigMap map(String rv, String... ips) {
    return new ConfigMapBuilder().withNewMetadata().withName("n1").withResourceVersion(rv).endMetadata()
        .withData(ips.length == 0 ? Map.of() : Map.of("ip", String.join(",", ips))).build();
  }

  private static String ip(ConfigMap m) {
    return m.getData().get("ip");
  }

  @Test
  void ourWriteShowsUntilTheInformerHasItsVersion() {
    OwnWrites<ConfigMap> w = writes(true);
    w.wrote(map("20", "192.0.2.1"));
    assertThat(ip(w.view("n1", map("10")))).isEqualTo("192.0.2.1");
    assertThat(w.view("n1", map("20", "192.0.2.1")).getMetadata().getResourceVersion()).isEqualTo("20");
    assertThat(w.pending()).isEmpty();
  }

  @Test
  void aPatchedObjectTheInformerNoLongerHasWasDeletedAndShowsNothing() {
    OwnWrites<ConfigMap> w = writes(true);
    w.wrote(map("20", "192.0.2.1"));
    assertThat(w.view("n1", null)).isNull();
    assertThat(w.pending()).isEmpty();
  }

  @Test
  void aCreatedObjectTheInformerDoesNotHaveYetIsOurs() {
    OwnWrites<ConfigMap> w = writes(false);
    w.wrote(map("20", "192.0.2.1"));
    assertThat(ip(w.view("n1", null))).isEqualTo("192.0.2.1");
    assertThat(w.pending()).containsExactly("n1");
  }

  @Test
  void aDeletionHidesTheInformersStaleObjectUntilItsDeleteArrives() {
    OwnWrites<ConfigMap> w = writes(true);
    w.deleted("n1", "20");
    assertThat(w.view("n1", map("20", "192.0.2.1"))).isNull();
    assertThat(w.view("n1", map("15", "192.0.2.1"))).isNull();
    assertThat(w.isEcho("n1", map("20", "192.0.2.1"))).as("a deletion has no echo").isFalse();
    assertThat(w.view("n1", null)).isNull();
    assertThat(w.pending()).isEmpty();
    assertThat(ip(w.view("n1", map("30", "192.0.2.9")))).isEqualTo("192.0.2.9");
  }

  @Test
  void theEventOfExactlyTheVersionWeWroteIsAnEchoOnce() {
    OwnWrites<ConfigMap> w = writes(false);
    w.wrote(map("20", "192.0.2.1"));
    assertThat(w.isEcho("n1", map("19", "192.0.2.1"))).as("an older version").isFalse();
    assertThat(w.isEcho("n1", map("21", "192.0.2.1"))).as("someone's later write").isFalse();
    assertThat(w.isEcho("n1", map("20", "192.0.2.1"))).isTrue();
    assertThat(w.isEcho("n1", map("20", "192.0.2.1"))).as("consumed").isFalse();
  }

  @Test
  void anExpectedWriteIsKnownByWhatItsEchoShowsUntilItFails() {
    OwnWrites<ConfigMap> w = writes(false);
    Object noted = w.expect("uid-1", m -> "192.0.2.1".equals(ip(m)));
    assertThat(w.view("uid-1", map("5", "192.0.2.7"))).as("no object to show yet").extracting(OwnWritesTest::ip)
        .isEqualTo("192.0.2.7");
    assertThat(w.pending()).isEmpty();
    assertThat(w.isEcho("uid-1", map("6", "192.0.2.2"))).isFalse();
    w.failed("uid-1", noted);
    assertThat(w.isEcho("uid-1", map("6", "192.0.2.1"))).as("failed writes never come back").isFalse();
    Object again = w.expect("uid-1", m -> "192.0.2.1".equals(ip(m)));
    w.failed("uid-1", new Object()); // another write's failure leaves this one
    assertThat(again).isNotNull();
    assertThat(w.isEcho("uid-1", map("6", "192.0.2.1"))).isTrue();
  }

  @Test
  void entriesAreForgottenAfterTheirTimeReadOrNot() {
    OwnWrites<ConfigMap> w = writes(false);
    w.wrote(map("20", "192.0.2.1"));
    w.expect("uid-1", m -> true);
    now.addAndGet(Duration.ofSeconds(31).toNanos());
    assertThat(w.isEcho("uid-1", map("1"))).as("too late: reconciled").isFalse();
    assertThat(w.view("n1", map("10")).getMetadata().getResourceVersion()).as("the informer decides").isEqualTo("10");
    w.expect("never-read", m -> true);
    now.addAndGet(Duration.ofSeconds(31).toNanos());
    w.wrote(map("40", "192.0.2.4")); // a later write sweeps what nobody read
    assertThat(w.pending()).containsExactly("n1");
    assertThat(w.isEcho("never-read", map("1"))).isFalse();
  }
}
