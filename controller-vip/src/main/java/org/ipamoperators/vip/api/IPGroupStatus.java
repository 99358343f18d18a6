package org.ipamoperators.vip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * Conditions ({@code Ready}: the definition is valid; {@code Overlapping}: it shares addresses with
 * another IPGroup), per-family usage and, for {@code kubectl get}, the addresses used over all
 * families and the free count of each.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPGroupStatus(
    List<Condition> conditions,
    Long observedGeneration,
    List<FamilyUsage> families,
    Long used,
    String free) {}
