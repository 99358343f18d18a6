/**
 * Rebuilds who holds which address from the claims found in a cluster: the earlier claim wins a
 * double claim, and every conflict is returned as data, never thrown.
 */
package org.ipamoperators.core.ledger;
