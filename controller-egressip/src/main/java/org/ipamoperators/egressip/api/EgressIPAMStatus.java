package org.ipamoperators.egressip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * What the controller observed and did: conditions (Ready, Degraded), per-CIDR usage, the
 * namespaces assigned, pending (waiting for an address or a node) and rejected (bad manual
 * annotation, address held by someone else), unplaceable IPs, the network type written to and the
 * platform (from OpenShift's Infrastructure, or the IPAM_PLATFORM setting).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EgressIPAMStatus(
    List<Condition> conditions,
    Long observedGeneration,
    List<CidrStatus> cidrs,
    Integer assignedNamespaces,
    Integer pendingNamespaces,
    Integer rejectedNamespaces,
    Integer unplaceableIPs,
    String networkType,
    String platform) {}
