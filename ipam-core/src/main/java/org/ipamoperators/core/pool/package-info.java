/**
 * Address pools: ranges minus reserved addresses and the addresses no pool hands out
 * ({@link org.ipamoperators.core.pool.SpecialAddresses}), validated (overlaps, host bits set, with a
 * suggested fix) before anything is allocated from them.
 */
package org.ipamoperators.core.pool;
