/**
 * The conformance kit of the {@code NodeNetwork} SPI: abstract JUnit 5 tests that every provider
 * passes. A provider's test class extends {@link org.ipamoperators.conformance.NodeNetworkContract}
 * (the network: capabilities, attach, detach and move, idempotent retries, exhausted capacity,
 * addresses it does not own, errors naming the node) and
 * {@link org.ipamoperators.conformance.NodeNetworkProviderContract} (discovery with
 * {@link java.util.ServiceLoader} and creation), and says how to set its platform up.
 */
package org.ipamoperators.conformance;
