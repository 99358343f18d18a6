/**
 * The failover policy: turns Ready transitions of nodes into verdicts (healthy, suspect, failed)
 * with a grace period and a recovery window, so a flapping node moves its addresses at most once
 * per window. Pure: time comes in with the observations.
 */
package org.ipamoperators.core.failover;
