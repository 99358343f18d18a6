package org.ipamoperators.vip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.controller.common.kube.AddressPatterns;

/**
 * The addresses of an IPGroup and who may use them. {@code segment} (one CIDR) and
 * {@code excludedIPs} are the old operator's; {@code cidrs} adds CIDRs, start-end ranges and single
 * addresses of either family. Admission checks the syntax; the controller checks the rest (host bits,
 * overlaps, exclusions outside the pool) and reports it in the status. Who may use the group:
 * {@code serviceSelector} (the Service's labels), {@code namespaceSelector} (its namespace's labels) and
 * {@code namespaces} (its namespace's name, as MetalLB's {@code serviceAllocation.namespaces}); each one set must
 * hold, an empty one admits everyone.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.segment) || (has(self.cidrs) && size(self.cidrs) > 0)",
    message = "give a segment or at least one entry in cidrs")
public record IPGroupSpec(
    @Size(max = 43)
    @Pattern(AddressPatterns.CIDR)
    String segment,
    @Size(max = 1024) List<@Size(max = 91) @Pattern(AddressPatterns.ADDRESS_CIDR_OR_RANGE) String> excludedIPs,
    @Size(max = 64) List<@Size(max = 91) @Pattern(AddressPatterns.ADDRESS_CIDR_OR_RANGE) String> cidrs,
    @Default("true") Boolean autoAssign,
    LabelSelector serviceSelector,
    LabelSelector namespaceSelector,
    Integer priority,
    @Pattern("^(FIRST_FREE|RANDOM|STICKY)$") String strategy,
    @Size(max = 1024) List<@Size(max = 63) @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$") String> namespaces) {

  /** A group open to Services of every namespace name (the old operator's fields and the selectors only). */
  public IPGroupSpec(String segment, List<String> excludedIPs, List<String> cidrs, Boolean autoAssign,
      LabelSelector serviceSelector, LabelSelector namespaceSelector, Integer priority, String strategy) {
    this(segment, excludedIPs, cidrs, autoAssign, serviceSelector, namespaceSelector, priority, strategy, null);
  }

  /** Every range of the pool: the segment first, then cidrs. */
  public List<String> ranges() {
    List<String> out = new ArrayList<>();
    if (segment != null && !segment.isBlank()) {
      out.add(segment.trim());
    }
    if (cidrs != null) {
      cidrs.stream().map(String::trim).filter(s -> !s.isEmpty() && !out.contains(s)).forEach(out::add);
    }
    return out;
  }

  public List<String> excluded() {
    return excludedIPs == null ? List.of() : excludedIPs.stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  public boolean autoAssignOrDefault() {
    return autoAssign == null || autoAssign;
  }

  public int priorityOrDefault() {
    return priority == null ? 0 : priority;
  }
}
