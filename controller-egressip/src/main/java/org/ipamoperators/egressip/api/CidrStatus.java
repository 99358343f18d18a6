package org.ipamoperators.egressip.api;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Usage of one CIDR: usable addresses, allocated to namespaces, free (as strings: IPv6 is big). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CidrStatus(String CIDR, String capacity, String allocated, String free) {}
