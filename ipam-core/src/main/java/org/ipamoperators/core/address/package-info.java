/**
 * IPv4 and IPv6 addresses ({@link org.ipamoperators.core.address.Ip}) and ranges
 * ({@link org.ipamoperators.core.address.IpRange}: CIDRs, start-end ranges, single addresses),
 * parsed once at the edge; everything else in ipam-core works on these values.
 */
package org.ipamoperators.core.address;
