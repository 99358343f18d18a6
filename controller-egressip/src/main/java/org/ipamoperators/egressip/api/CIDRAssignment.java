package org.ipamoperators.egressip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.Pattern;
import java.util.List;
import org.ipamoperators.controller.common.kube.AddressPatterns;

/**
 * One CIDR of an EgressIPAM and the topology label value of the nodes that host its addresses.
 * Field names are the old operator's ({@code CIDR} in capitals) so existing objects keep working.
 * Admission checks the syntax (IPv4 or IPv6 with a prefix); the controller checks the rest.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CIDRAssignment(
    @JsonProperty("CIDR") @Required @Size(max = 43)
    @Pattern(AddressPatterns.CIDR)
    String cidr,
    @Required @Size(max = 63) String labelValue,
    @Size(max = 1024) List<@Size(max = 45) @Pattern(AddressPatterns.ADDRESS_CIDR_OR_RANGE) String> reservedIPs) {

  public List<String> reservedOrEmpty() {
    return reservedIPs == null ? List.of() : reservedIPs;
  }
}
