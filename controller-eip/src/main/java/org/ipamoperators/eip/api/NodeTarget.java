package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;

/** Node mode: one Ready node whose labels contain every pair holds the address. */
@ValidationRule(value = "size(self.selector) > 0",
    message = "an empty node selector would match every node: name at least one label")
public record NodeTarget(
    @JsonPropertyDescription("labels (equality) of the nodes that may hold the address; one holds it at a time")
    @Required Map<String, String> selector) {}
