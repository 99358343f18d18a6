/**
 * The platform side, implemented by the cloud modules: a
 * {@link org.ipamoperators.core.spi.NodeNetwork} describes how nodes are attached, which addresses
 * are in use, and applies attach, detach and move changes; a
 * {@link org.ipamoperators.core.spi.NodeNetworkProvider}, found with {@link java.util.ServiceLoader},
 * creates the network for the platforms it serves. The conformance kit
 * ({@code org.ipamoperators:ipam-conformance-kit}) holds the contract tests every network passes.
 */
package org.ipamoperators.core.spi;
