package org.ipamoperators.core.placement;

/**
 * Could a group lose its busiest node? {@code spareElsewhere} is the free capacity of the group's
 * other eligible nodes (-1 when one of them is unlimited); the group survives when that is at least
 * what the busiest node hosts.
 */
public record GroupHeadroom(String group, int eligibleNodes, int hosted, String busiestNode,
    int busiestHosted, long spareElsewhere, boolean survivesLossOfBusiestNode) {}
