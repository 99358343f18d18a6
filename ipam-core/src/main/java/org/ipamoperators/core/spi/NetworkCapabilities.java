package org.ipamoperators.core.spi;

/**
 * What a platform can do. {@code makeBeforeBreak}: a MOVE attaches on the target before it detaches
 * from the source (EC2's reassignment does it in one call). {@code reportsCapacity}: attachments
 * carry a real per-node limit. {@code seesForeignAddresses}: {@link NodeNetwork#addressesInUse}
 * knows addresses used by other tools, not only the nodes'. {@code requiresApiCalls}: false where
 * the cluster network alone carries the address (bare metal).
 *
 * @param makeBeforeBreak a move attaches on the target before detaching from the source
 * @param ipv6 IPv6 addresses can be attached
 * @param reportsCapacity {@link NodeAttachment#capacity()} is the platform's real limit
 * @param seesForeignAddresses {@link NodeNetwork#addressesInUse} includes other tools' addresses
 * @param requiresApiCalls changes are carried out by platform calls, and
 *     {@link NodeAttachment#secondaryAddresses()} shows what they did
 */
public record NetworkCapabilities(boolean makeBeforeBreak, boolean ipv6, boolean reportsCapacity,
    boolean seesForeignAddresses, boolean requiresApiCalls) {}
