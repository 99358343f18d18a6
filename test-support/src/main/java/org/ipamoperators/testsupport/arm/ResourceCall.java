package org.ipamoperators.testsupport.arm;

import java.util.List;
import java.util.Map;

/**
 * A request under {@code providers/<namespace>/<type>/}: {@code rg} null for a subscription-wide
 * path, {@code rest} what follows the type (as sent, and lower case).
 */
record ResourceCall(String method, String rawPath, Map<String, String> q, Map<String, String> headers,
    String body, String rg, List<String> rest, List<String> restLow) {}
