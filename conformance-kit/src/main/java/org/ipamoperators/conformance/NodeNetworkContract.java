package org.ipamoperators.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.AddressChangeResult.Outcome;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link NodeNetwork}, as tests. Extend it in a provider's test and implement the
 * fixture methods against a fresh platform for each test (a fake, an emulator such as moto, or a
 * sandbox account): the kit creates nodes through them and checks what the network does.
 *
 * <p>What is checked depends on {@link NetworkCapabilities#requiresApiCalls()}. A network that calls
 * a platform must show its changes in {@link NodeNetwork#describe} and refuse what it must not do; a
 * network without calls (the cluster network alone carries the addresses) must touch nothing and
 * still answer every change and question.
 *
 * <p>Every test uses its own nodes and addresses, so a fixture may share one platform between tests
 * as long as it gives new nodes each time.
 */
public abstract class NodeNetworkContract {

  /** For subclasses. */
  protected NodeNetworkContract() {}

  /**
   * The network under test, over the platform of the fixture methods; the same instance throughout
   * one test.
   *
   * @return the network
   */
  protected abstract NodeNetwork network();

  /**
   * A new node of the platform, with room for at least three addresses of the network, in
   * {@link #subnet()}.
   *
   * @param name the node's name, unique within the test
   * @return the node as the cluster would describe it (name, provider id, labels, addresses)
   * @throws Exception when the platform cannot create it (the test fails)
   */
  protected abstract NodeRef node(String name) throws Exception;

  /**
   * A new node whose capacity is small (one to three addresses of the network), in
   * {@link #subnet()}.
   *
   * @param name the node's name, unique within the test
   * @return the node
   * @throws Exception when the platform cannot create it
   */
  protected abstract NodeRef smallNode(String name) throws Exception;

  /**
   * The subnet the nodes are in; the kit attaches addresses of it that are not in use.
   *
   * @return the nodes' subnet
   */
  protected abstract IpRange subnet();

  /**
   * Puts an address on the node that this network did not attach (a secondary address of another
   * tool, set up through the platform directly) and returns it; where the platform has no such
   * thing, one of the node's own addresses.
   *
   * @param node a node made by {@link #node} or {@link #smallNode}
   * @return the address, in {@link #subnet()}
   * @throws Exception when the platform cannot do it
   */
  protected abstract Ip foreignAddress(NodeRef node) throws Exception;

  /**
   * A node the platform does not have (a deleted instance, say).
   *
   * @return the node as the cluster would still describe it
   */
  protected abstract NodeRef missingNode();

  /**
   * Whether the platform under test refuses an address beyond a node's capacity. True for real
   * platforms; false only for a test double that does not (moto 5.1 does not), which must then
   * be covered by another double that does.
   *
   * @return true when the platform enforces capacity
   */
  protected boolean platformEnforcesCapacity() {
    return true;
  }

  // ---------------------------------------------------------------------------------------------

  private final Set<Ip> handedOut = new LinkedHashSet<>();

  private NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    return network().describe(node);
  }

  private boolean callsPlatform() {
    return network().capabilities().requiresApiCalls();
  }

  /** Addresses of the subnet nobody uses, none handed out before in this test. */
  private List<Ip> free(int count) throws NodeNetworkException {
    Set<Ip> used = network().addressesInUse(subnet());
    List<Ip> out = new ArrayList<>();
    Ip ip = subnet().first();
    for (int i = 0; i < 10; i++) {
      ip = ip.next(); // clear of network and platform-reserved addresses at the start
    }
    while (out.size() < count) {
      if (!subnet().contains(ip)) {
        throw new IllegalStateException("subnet " + subnet() + " has fewer than " + count + " free addresses");
      }
      if (!used.contains(ip) && handedOut.add(ip)) {
        out.add(ip);
      }
      ip = ip.next();
    }
    return out;
  }

  private List<AddressChangeResult> apply(AddressChange... changes) {
    List<AddressChangeResult> results = network().apply(List.of(changes));
    assertThat(results).as("one result per change").hasSize(changes.length);
    for (int i = 0; i < changes.length; i++) {
      assertThat(results.get(i).change()).as("result %d answers change %d", i, i).isEqualTo(changes[i]);
      assertThat(results.get(i).outcome()).as("outcome of %s", changes[i]).isNotNull();
    }
    return results;
  }

  private static void assertApplied(List<AddressChangeResult> results) {
    for (AddressChangeResult r : results) {
      assertThat(r.outcome()).as("%s: %s (%s)", r.change(), r.message(), r.errorCode()).isEqualTo(Outcome.APPLIED);
    }
  }

  private Set<Ip> on(NodeRef node) throws NodeNetworkException {
    return describe(node).secondaryAddresses();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Capabilities are an answer, the same each time.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void capabilitiesAreTheSameOnEveryCall() throws Exception {
    NetworkCapabilities first = network().capabilities();
    assertThat(first).isNotNull();
    assertThat(network().capabilities()).isEqualTo(first);
  }

  /**
   * A node is described under its own name, with a capacity that is a real bound when the network
   * says it reports one.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void describeNamesTheNodeAndReportsItsCapacity() throws Exception {
    NodeRef n = node("contract-describe");
    NodeAttachment a = describe(n);
    assertThat(a.node()).isEqualTo(n.name());
    assertThat(a.capacity()).as("room for three addresses").isGreaterThanOrEqualTo(3);
    if (a.primaryAddress() != null && !n.addresses().isEmpty()) {
      assertThat(n.addresses()).as("the primary address is one of the node's").contains(a.primaryAddress());
    }
    NodeRef small = smallNode("contract-describe-small");
    int capacity = describe(small).capacity();
    assertThat(capacity).as("a small node's capacity").isBetween(1, 3);
  }

  /**
   * An attached address is on the node until it is detached; both are applied.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void attachThenDetach() throws Exception {
    NodeRef n = node("contract-attach");
    describe(n);
    Ip ip = free(1).get(0);

    assertApplied(apply(AddressChange.attach(ip, n.name())));
    if (callsPlatform()) {
      assertThat(on(n)).as("after attach").contains(ip);
      assertThat(network().addressesInUse(subnet())).as("in use after attach").contains(ip);
    }
    assertApplied(apply(AddressChange.detach(ip, n.name())));
    if (callsPlatform()) {
      assertThat(on(n)).as("after detach").doesNotContain(ip);
    }
  }

  /**
   * A move leaves the address on the target node only.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void moveCarriesTheAddressToTheOtherNode() throws Exception {
    NodeRef a = node("contract-move-a");
    NodeRef b = node("contract-move-b");
    describe(a);
    describe(b);
    Ip ip = free(1).get(0);
    assertApplied(apply(AddressChange.attach(ip, a.name())));

    assertApplied(apply(AddressChange.move(ip, a.name(), b.name())));

    if (callsPlatform()) {
      assertThat(on(b)).as("target after move").contains(ip);
      assertThat(on(a)).as("source after move").doesNotContain(ip);
    }
  }

  /**
   * Applying a change again after it was applied (a retry after a lost answer or a restart) is
   * harmless: never a failure, and the address ends where it should, once.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void retriesOfAppliedChangesAreHarmless() throws Exception {
    NodeRef a = node("contract-retry-a");
    NodeRef b = node("contract-retry-b");
    describe(a);
    describe(b);
    Ip ip = free(1).get(0);

    assertApplied(apply(AddressChange.attach(ip, a.name())));
    describe(a); // as after a restart: what the platform holds now
    assertApplied(apply(AddressChange.attach(ip, a.name())));
    assertApplied(apply(AddressChange.move(ip, a.name(), b.name())));
    describe(a);
    describe(b);
    assertApplied(apply(AddressChange.move(ip, a.name(), b.name())));
    if (callsPlatform()) {
      assertThat(on(b)).contains(ip);
      assertThat(on(a)).doesNotContain(ip);
    }
    assertApplied(apply(AddressChange.detach(ip, b.name())));
    describe(b);
    List<AddressChangeResult> again = apply(AddressChange.detach(ip, b.name()));
    assertThat(again.get(0).outcome()).as("detaching an address that is gone: %s", again.get(0).message())
        .isNotEqualTo(Outcome.FAILED);
    if (callsPlatform()) {
      assertThat(on(b)).doesNotContain(ip);
    }
  }

  /**
   * Results come one per change, in the order of the changes, for a batch over several nodes.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void aBatchOverSeveralNodesGetsOneResultPerChangeInOrder() throws Exception {
    NodeRef a = node("contract-batch-a");
    NodeRef b = node("contract-batch-b");
    describe(a);
    describe(b);
    List<Ip> ips = free(3);
    List<AddressChangeResult> r = apply(AddressChange.attach(ips.get(0), a.name()),
        AddressChange.attach(ips.get(1), b.name()), AddressChange.attach(ips.get(2), a.name()));
    assertApplied(r);
    if (callsPlatform()) {
      assertThat(on(a)).contains(ips.get(0), ips.get(2)).doesNotContain(ips.get(1));
      assertThat(on(b)).contains(ips.get(1));
    }
  }

  /**
   * Beyond a node's capacity the excess fails, as a result with the platform's error code naming
   * the node, never as an exception; another node in the same batch is not held up.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void exhaustedCapacityFailsThatNodeAloneWithAnErrorCode() throws Exception {
    NodeRef small = smallNode("contract-full");
    NodeRef other = node("contract-full-other");
    int capacity = describe(small).capacity();
    describe(other);
    List<Ip> ips = free(capacity + 2);
    List<AddressChange> changes = new ArrayList<>();
    for (int i = 0; i <= capacity; i++) {
      changes.add(AddressChange.attach(ips.get(i), small.name()));
    }
    changes.add(AddressChange.attach(ips.get(capacity + 1), other.name()));

    List<AddressChangeResult> r = apply(changes.toArray(AddressChange[]::new));

    assertApplied(r.subList(capacity + 1, capacity + 2));
    if (callsPlatform() && platformEnforcesCapacity()) {
      List<AddressChangeResult> failed = r.subList(0, capacity + 1).stream()
          .filter(x -> x.outcome() == Outcome.FAILED).toList();
      assertThat(failed).as("attaching %d addresses to a node with room for %d", capacity + 1, capacity)
          .isNotEmpty();
      for (AddressChangeResult f : failed) {
        assertThat(f.errorCode()).as("error code of %s", f.change()).isNotBlank();
        assertThat(f.message()).as("message of %s", f.change()).contains(small.name());
      }
      Set<Ip> held = new LinkedHashSet<>(on(small));
      held.retainAll(ips);
      assertThat(held).as("addresses held by the full node").hasSizeLessThanOrEqualTo(capacity);
    } else {
      assertThat(describe(small).capacity()).as("capacity is still reported").isEqualTo(capacity);
    }
  }

  /**
   * An address the network did not attach is never detached, moved away or taken over, and stays
   * in use.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void addressesItDoesNotOwnAreNeverTouched() throws Exception {
    NodeRef n = node("contract-foreign");
    NodeRef other = node("contract-foreign-other");
    Ip foreign = foreignAddress(n);
    describe(n);
    describe(other);

    List<AddressChangeResult> r = apply(AddressChange.detach(foreign, n.name()));
    r = new ArrayList<>(r);
    r.addAll(apply(AddressChange.move(foreign, n.name(), other.name())));
    r.addAll(apply(AddressChange.attach(foreign, other.name())));

    if (callsPlatform()) {
      for (AddressChangeResult x : r) {
        assertThat(x.outcome()).as("%s of an address it does not own", x.change().kind())
            .isNotEqualTo(Outcome.APPLIED);
        assertThat(x.message()).as("why %s was not applied", x.change()).isNotBlank();
      }
      assertThat(on(n)).as("the owner's node still holds it").contains(foreign);
      assertThat(on(other)).doesNotContain(foreign);
    }
    assertThat(network().addressesInUse(subnet())).as("still in use").contains(foreign);
  }

  /**
   * A node the platform does not have is an error naming the node: an exception from
   * {@code describe}, a failed result from {@code apply}. A network without platform calls has
   * nobody to ask and describes any node.
   *
   * @throws Exception on a platform error
   */
  @Test
  public void aNodeThePlatformDoesNotHaveIsAnErrorNamingIt() throws Exception {
    NodeRef missing = missingNode();
    Ip ip = free(1).get(0);
    if (callsPlatform()) {
      assertThatThrownBy(() -> describe(missing)).isInstanceOf(NodeNetworkException.class)
          .hasMessageContaining(missing.name())
          .satisfies(e -> assertThat(((NodeNetworkException) e).subject()).isEqualTo(missing.name()));
      AddressChangeResult r = apply(AddressChange.attach(ip, missing.name())).get(0);
      assertThat(r.outcome()).isEqualTo(Outcome.FAILED);
      assertThat(r.message()).contains(missing.name());
    } else {
      assertThat(describe(missing).node()).isEqualTo(missing.name());
      assertApplied(apply(AddressChange.attach(ip, missing.name())));
    }
  }
}
