/**
 * Address pools: ranges minus reserved addresses, validated (overlaps, host bits set, with a
 * suggested fix) before anything is allocated from them.
 */
package org.ipamoperators.core.pool;
