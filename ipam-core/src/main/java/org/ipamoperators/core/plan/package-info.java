/**
 * The whole decision of {@code ipam plan} and the controllers in one call: pools, claimants and
 * existing claims in, allocations, releases, placement and problems out.
 */
package org.ipamoperators.core.plan;
