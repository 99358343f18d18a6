/**
 * Places addresses on nodes: keeps healthy placements, moves addresses off ineligible nodes, fills
 * the least used node first, never exceeds a node capacity, and explains every address it cannot
 * place. Deterministic: the same inputs give the same plan.
 */
package org.ipamoperators.core.placement;
