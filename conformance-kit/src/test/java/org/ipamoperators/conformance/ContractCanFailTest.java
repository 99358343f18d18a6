package org.ipamoperators.conformance;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;

import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * The kit fails networks that break the contract, each on the test that names the breach, and
 * passes one that keeps it.
 */
class ContractCanFailTest {
  static class Sound extends TableNetwork.Contract {
    @Override
    TableNetwork.Flaw flaw() {
      return TableNetwork.Flaw.NONE;
    }
  }

  static class TouchesForeign extends TableNetwork.Contract {
    @Override
    TableNetwork.Flaw flaw() {
      return TableNetwork.Flaw.TOUCHES_FOREIGN;
    }
  }

  static class ThrowsWhenFull extends TableNetwork.Contract {
    @Override
    TableNetwork.Flaw flaw() {
      return TableNetwork.Flaw.THROWS_WHEN_FULL;
    }
  }

  static class RetryFails extends TableNetwork.Contract {
    @Override
    TableNetwork.Flaw flaw() {
      return TableNetwork.Flaw.RETRY_FAILS;
    }
  }

  private static Events run(Class<?> c) {
    return EngineTestKit.engine("junit-jupiter").selectors(selectClass(c)).execute().testEvents();
  }

  @Test
  void aSoundNetworkPassesEveryTest() {
    run(Sound.class).assertStatistics(s -> s.started(9).succeeded(9).failed(0));
  }

  @Test
  void aNetworkThatTouchesOthersAddressesFailsThatTestAlone() {
    Events e = run(TouchesForeign.class);
    e.assertStatistics(s -> s.failed(1));
    e.failed().assertThatEvents().haveExactly(1, event(test("addressesItDoesNotOwnAreNeverTouched"),
        finishedWithFailure()));
  }

  @Test
  void aNetworkThatThrowsWhenANodeIsFullFailsTheCapacityTest() {
    Events e = run(ThrowsWhenFull.class);
    e.assertStatistics(s -> s.failed(1));
    e.failed().assertThatEvents().haveExactly(1, event(test("exhaustedCapacityFailsThatNodeAloneWithAnErrorCode"),
        finishedWithFailure()));
  }

  @Test
  void aNetworkWhoseRetriesFailFailsTheRetryTest() {
    Events e = run(RetryFails.class);
    e.assertStatistics(s -> s.failed(1));
    e.failed().assertThatEvents().haveExactly(1, event(test("retriesOfAppliedChangesAreHarmless"),
        finishedWithFailure()));
  }
}
