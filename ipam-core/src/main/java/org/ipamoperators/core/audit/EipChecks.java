package org.ipamoperators.core.audit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Compares Eip objects' status with the Elastic IPs EC2 has, allocation by allocation: an Eip whose status names
 * an allocation EC2 does not have, or one tagged for another Eip (DRIFT); two Eips showing one allocation
 * (DUPLICATE); an allocation tagged for an Eip that does not show it (LEAK: the eip controller's sweep releases
 * it once that Eip is gone); an association that differs from the status (DRIFT). An Eip without an allocation in
 * its status is work in progress, so an address tagged for it is not a leak. Nothing is repaired here.
 */
public final class EipChecks {
  private EipChecks() {}

  /** The resource space of allocations. */
  public static final String SPACE = "eip";

  /**
   * Runs the checks.
   *
   * @param shown every Eip of the cluster, with or without an allocation
   * @param addresses every Elastic IP EC2 has that is tagged for this cluster or that an Eip names
   * @return the findings, sorted by resource then kind then message
   */
  public static List<Finding> check(List<EipShown> shown, List<ElasticAddress> addresses) {
    Map<String, List<EipShown>> byAllocation = new TreeMap<>();
    Set<String> owners = new TreeSet<>();
    for (EipShown e : shown) {
      owners.add(e.owner());
      if (e.allocationId() != null) {
        byAllocation.computeIfAbsent(e.allocationId(), a -> new ArrayList<>()).add(e);
      }
    }
    Map<String, ElasticAddress> ec2 = new TreeMap<>();
    addresses.forEach(a -> ec2.put(a.allocationId(), a));
    Set<String> all = new TreeSet<>(byAllocation.keySet());
    ec2.forEach((id, a) -> {
      if (a.tagOwner() != null) {
        all.add(id);
      }
    });
    List<Finding> findings = new ArrayList<>();
    for (String id : all) {
      Resource r = new Resource(SPACE, id);
      List<EipShown> s = byAllocation.getOrDefault(id, List.of());
      ElasticAddress a = ec2.get(id);
      Set<String> holders = s.stream().map(EipShown::owner).collect(Collectors.toCollection(TreeSet::new));
      if (holders.size() > 1) {
        findings.add(new Finding(FindingKind.DUPLICATE, r, List.copyOf(holders), "allocation " + id + " is shown by "
            + holders.size() + " Eips: " + where(s) + ". Only one may keep it"));
      }
      if (a == null) {
        findings.add(new Finding(FindingKind.DRIFT, r, List.copyOf(holders), "allocation " + id + " is named by "
            + where(s) + " but EC2 does not have it: the address is gone and the Eip needs another"));
        continue;
      }
      if (s.isEmpty()) {
        boolean ownerExists = owners.contains(a.tagOwner());
        boolean inProgress = ownerExists && shown.stream().anyMatch(e -> e.owner().equals(a.tagOwner())
            && e.allocationId() == null);
        if (!inProgress) {
          findings.add(new Finding(FindingKind.LEAK, r, List.of(a.tagOwner()), "allocation " + id + " ("
              + a.publicIp() + ") is tagged for " + a.tagOwner() + " and shown by no Eip; " + (ownerExists
              ? "that Eip shows another address" : "that Eip is gone, so the eip controller's sweep releases it")));
        }
        continue;
      }
      for (EipShown e : s) {
        if (!e.owner().equals(a.tagOwner())) {
          findings.add(new Finding(FindingKind.DRIFT, r, sorted(e.owner(), a.tagOwner()), "allocation " + id + " ("
              + a.publicIp() + ") is shown by " + e.where() + " but EC2 tags it "
              + (a.tagOwner() == null ? "for no Eip of this cluster" : "for " + a.tagOwner())));
        }
        if (!Objects.equals(e.networkInterface(), a.networkInterface()) || !Objects.equals(e.privateIp(), a.privateIp())) {
          findings.add(new Finding(FindingKind.DRIFT, r, List.of(e.owner()), "allocation " + id + " ("
              + a.publicIp() + "): " + e.where() + " says it is associated with " + assoc(e.networkInterface(),
              e.privateIp()) + " but EC2 has it associated with " + assoc(a.networkInterface(), a.privateIp())));
        }
      }
    }
    findings.sort(Comparator.comparing(Finding::resource).thenComparing(Finding::kind).thenComparing(Finding::message));
    return findings;
  }

  private static String assoc(String eni, String ip) {
    return eni == null && ip == null ? "nothing" : eni + " " + ip;
  }

  private static List<String> sorted(String a, String b) {
    Set<String> s = new TreeSet<>();
    s.add(a);
    if (b != null) {
      s.add(b);
    }
    return List.copyOf(s);
  }

  private static String where(List<EipShown> s) {
    return s.stream().map(EipShown::where).sorted().collect(Collectors.joining(", "));
  }
}
