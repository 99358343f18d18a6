/**
 * The checker behind {@code ipam audit} and the operators' repair loop: it compares what the ledgers
 * say (who claimed which address or number) with what the cluster and the clouds show (who publishes
 * it), and reports duplicates, leaks, orphans and drift. Pure: the caller fetches both sides; the
 * checker decides, and proposes only repairs that cannot take anything from a live owner.
 */
package org.ipamoperators.core.audit;
