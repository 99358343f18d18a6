package org.ipamoperators.eip.plan;

import java.util.Map;

/** A node-mode Eip: its key ({@code namespace/name}), node selector and the node holding it now (or null). */
public record NodeEip(String key, Map<String, String> selector, String holder) {}
