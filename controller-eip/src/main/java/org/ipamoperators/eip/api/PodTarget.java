package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Pod mode: the pod of this name in the Eip's namespace. */
public record PodTarget(
    @JsonPropertyDescription("name of the pod, in the Eip's namespace, that gets the address")
    @Required @Size(min = 1, max = 253) String podName) {}
