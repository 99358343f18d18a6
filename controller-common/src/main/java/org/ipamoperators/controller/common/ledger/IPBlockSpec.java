package org.ipamoperators.controller.common.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;
import java.util.Map;

/**
 * What an IPBlock records: its CIDR and, per held address (canonical text, as {@code Ip.toString}
 * prints it), who holds it. An address without an entry is free as far as this block is concerned.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPBlockSpec(@Required String cidr, Map<String, IPBlockEntry> entries) {}
