package org.ipamoperators.keepalived.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import java.util.Map;

/**
 * {@code routerIDs} is keepalived-operator's (instance key, {@code ns/name} or {@code ns/name/<ip>}, to router id);
 * it mirrors the ledger's IDClaims, which are the truth. Conditions: {@code Ready} (the configuration of every node
 * is written), {@code RouterIDsExhausted} (some instances have no router id), {@code ServiceProblems} (some
 * attached services are not, or not fully, announced; each also has a Warning Event). {@code refusedServices}: the
 * first {@value #MAX_REFUSED_LISTED} Services (by {@code ns/name}) that the group refused, wholly or some of their
 * VIPs, because of their namespace or an address outside its {@code vipCIDRs}; {@code refusedServiceCount} counts
 * them all.
 */
// Empty maps and lists are left out (server-side apply then removes them), never sent as null.
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KeepalivedGroupStatus(
    @JsonProperty("routerIDs") Map<String, Integer> routerIDs,
    List<Condition> conditions,
    Long observedGeneration,
    List<String> services,
    Integer serviceCount,
    Integer instanceCount,
    Integer nodeCount,
    String routerIDSpace,
    List<String> refusedServices,
    Integer refusedServiceCount) {
  public static final int MAX_REFUSED_LISTED = 50;
}
