package org.ipamoperators.vip.api;

/** Usage of one address family of a pool; counts as strings since an IPv6 pool exceeds a long. */
public record FamilyUsage(String family, String total, String used, String free) {}
