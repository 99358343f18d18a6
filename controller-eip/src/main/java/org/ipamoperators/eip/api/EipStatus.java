package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * The old operator's six fields with its names (the address, and what holds it: ENI, private address, pod or node
 * name, association), plus conditions: {@code Ready} (associated as asked), {@code Conflict} (another Eip wins the
 * same pod), {@code QuotaExceeded}, and the reason a target cannot be reached ({@code Ready=False} with reason
 * {@code PodNotFound}, {@code PodHasNoIP}, {@code NotOnAws}, {@code EniNotFound}, {@code NoEligibleNode}, ...).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EipStatus(String allocationId, String publicIpAddress, String eni, String privateIpAddress,
    String resourceId, String associationId, List<Condition> conditions, Long observedGeneration) {}
