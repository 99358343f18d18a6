package org.ipamoperators.cli.migrate;

import java.util.List;
import java.util.Map;

/** What {@code ipam migrate} reports: one section per old operator. */
public record MigrationReport(List<Section> sections) {

  /** Whether anything must change before the switch. */
  public boolean blocked() {
    return sections.stream().anyMatch(s -> !s.blockers().isEmpty());
  }

  /** Something that stops the switch, and what to do about it. */
  public record Blocker(String problem, String fix) {}

  /**
   * One old operator.
   *
   * @param installed false when neither its CRDs nor its Deployment are in the cluster (the rest is then empty)
   * @param counts how many objects of each of its kinds exist
   * @param adopted what the new controller takes over unchanged
   * @param steps the commands of the switch, in order
   */
  public record Section(String operator, String controller, boolean installed, Map<String, Integer> counts,
      List<String> adopted, List<Blocker> blockers, List<String> steps) {}
}
