package org.ipamoperators.egressip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.List;

/**
 * The desired state of an EgressIPAM: the old operator's fields, plus an allocation strategy, a
 * default per-node capacity and the failover grace period. Two CIDRs may share a labelValue, as the
 * old CRD allowed: the nodes of that value host the addresses of both.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.cidrAssignments) || self.cidrAssignments.all(a, self.cidrAssignments.exists_one(b, b.CIDR == a.CIDR))",
    message = "each CIDR may appear only once in cidrAssignments")
public record EgressIPAMSpec(
    @Size(max = 32) List<CIDRAssignment> cidrAssignments,
    @Required String topologyLabel,
    LabelSelector nodeSelector,
    @Pattern("^(FIRST_FREE|RANDOM|STICKY)$") String strategy,
    @Min(0) Integer nodeCapacity,
    @Min(0) Integer failoverGraceSeconds) {

  public List<CIDRAssignment> cidrs() {
    return cidrAssignments == null ? List.of() : cidrAssignments;
  }
}
