package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import java.util.Map;

/** Where the address comes from when the Eip has none yet. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EipAllocation(
    @JsonPropertyDescription("BYOIP public IPv4 pool (ipv4pool-ec2-...) to allocate from instead of Amazon's")
    @Size(max = 64) String publicIpv4Pool,
    @JsonPropertyDescription("adopt an existing address carrying all these tags (and no other Eip's) instead of"
        + " allocating one; it is tagged as ours")
    Map<String, String> adoptTags) {}
