/**
 * Allocators over a {@link org.ipamoperators.core.pool.Pool}: first free, random or sticky (the same
 * owner gets the same address on a fresh pool), with a cooldown for released addresses. The free
 * space is kept as sorted disjoint ranges, so no operation enumerates a pool; that tree is internal.
 */
package org.ipamoperators.core.allocation;
