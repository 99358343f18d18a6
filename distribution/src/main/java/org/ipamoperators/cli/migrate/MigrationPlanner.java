package org.ipamoperators.cli.migrate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.cli.migrate.Facts.Checked;
import org.ipamoperators.cli.migrate.Facts.Crd;
import org.ipamoperators.cli.migrate.Facts.Deployment;
import org.ipamoperators.cli.migrate.Facts.Found;
import org.ipamoperators.cli.migrate.Facts.OurCrd;
import org.ipamoperators.cli.migrate.MigrationReport.Blocker;
import org.ipamoperators.cli.migrate.MigrationReport.Section;
import org.ipamoperators.keepalived.KeepalivedSettings;

/** Decides, from what was found, what is adopted, what blocks the switch and the ordered steps. Pure. */
public final class MigrationPlanner {
  /** The field manager of {@code kubectl apply --server-side}: its own earlier applies never conflict. */
  static final String KUBECTL = "kubectl";

  /** The old operator's Deployment variables and the eip chart values they become. */
  private static final Map<String, String> EIP_SETTINGS = eipSettings();

  /**
   * Where the chart is and where it goes.
   *
   * @param chart the chart reference given to helm, e.g. {@code ipam-operators-0.1.0.tgz}
   * @param crdDir the directory holding the chart's CRD files, e.g. {@code ipam-operators/crds}
   */
  public record Target(String chart, String crdDir, String release, String namespace) {}

  private MigrationPlanner() {}

  public static MigrationReport plan(List<Found> found, Target target) {
    boolean egress = found.stream().anyMatch(f -> f.operator() == OldOperator.EGRESSIP && !f.nothing());
    return new MigrationReport(found.stream().map(f -> section(f, target, egress)).toList());
  }

  static Section section(Found f, Target target) {
    return section(f, target, true);
  }

  /**
   * One old operator's section.
   *
   * @param egress whether egressip is migrated too: the chart enables it by default, so the helm step of another
   *     controller turns it off when nothing of egressip-ipam-operator was found
   */
  static Section section(Found f, Target target, boolean egress) {
    OldOperator op = f.operator();
    if (f.nothing()) {
      return new Section(op.project(), op.controller(), false, Map.of(), List.of(), List.of(), List.of());
    }
    List<Blocker> blockers = new ArrayList<>();
    List<String> steps = new ArrayList<>();
    for (Deployment d : f.deployments()) {
      if (d.replicas() > 0) {
        String scale = "kubectl scale deploy/" + d.name() + " --replicas=0 -n " + d.namespace();
        blockers.add(new Blocker("Deployment " + d.namespace() + "/" + d.name() + " still runs " + d.replicas()
            + " replica(s) of " + op.project() + ": both operators would write the same objects", scale));
        steps.add(scale);
      }
    }
    crdSteps(f, target, blockers, steps);
    for (Checked c : f.checked()) {
      if (!c.problems().isEmpty()) {
        blockers.add(new Blocker(c.kind() + " " + c.ref() + " would be refused by the " + op.controller()
            + " controller: " + String.join("; ", c.problems()),
            "correct its spec before the switch (" + op.project() + " accepted it; the new controller marks it"
                + " Invalid and serves none of its addresses)"));
      }
    }
    steps.add(helmStep(f, target, blockers) + (egress || f.operator() == OldOperator.EGRESSIP ? ""
        : " --set controllers.egressip.enabled=false"));
    // This controller only: the others' addresses are still their old operators' (unclaimed in the ledger) until
    // their own sections are done, and a full audit would report each as an orphan.
    steps.add("ipam audit --controllers " + op.controller());
    List<String> adopted = f.held().stream().map(h -> h.kind() + " " + h.ref() + ": " + h.what()).toList();
    return new Section(op.project(), op.controller(), true, f.counts(), adopted, blockers, steps);
  }

  /** Our CRD replaces each old one server-side; forced when another manager applied the old one. */
  private static void crdSteps(Found f, Target target, List<Blocker> blockers, List<String> steps) {
    for (OldOperator.Kind k : f.operator().kinds()) {
      Crd old = f.crds().stream().filter(c -> c.name().equals(k.crd())).findFirst().orElse(null);
      OurCrd ours = f.ours().stream().filter(o -> o.name().equals(k.crd())).findFirst().orElse(null);
      if (old == null || ours == null) {
        continue; // absent: the chart installs ours; or a kind we only read and ship no CRD for
      }
      for (String stored : old.stored()) {
        if (!ours.served().contains(stored)) {
          blockers.add(new Blocker("CRD " + old.name() + " has objects stored as " + stored + ", which our CRD"
              + " does not serve (it serves " + String.join(", ", ours.served()) + "): the apiserver refuses the"
              + " hand-over", "write every " + k.kind() + " back at a version our CRD serves, then remove "
              + stored + " from the CRD's status.storedVersions"));
        }
      }
      List<String> others = new ArrayList<>(old.applyManagers());
      others.remove(KUBECTL);
      boolean force = !others.isEmpty() || !old.otherManagers().isEmpty();
      String apply = "kubectl apply --server-side" + (force ? " --force-conflicts" : "") + " -f "
          + target.crdDir() + "/" + ours.file();
      if (!others.isEmpty()) {
        blockers.add(new Blocker("CRD " + old.name() + " is server-side applied by field manager "
            + String.join(", ", others) + ": a plain server-side apply of ours is refused with a conflict, and"
            + " helm never replaces a CRD that exists", apply));
      }
      String unpack = "tar xzf " + target.chart();
      if (!steps.contains(unpack)) {
        steps.add(unpack); // the chart's crds/ holds the CRD files
      }
      steps.add(apply);
    }
  }

  private static String helmStep(Found f, Target target, List<Blocker> blockers) {
    StringBuilder b = new StringBuilder("helm upgrade --install " + target.release() + " " + target.chart()
        + " -n " + target.namespace() + " --create-namespace --reuse-values --set controllers."
        + f.operator().controller() + ".enabled=true");
    if (f.operator() == OldOperator.KEEPALIVED) {
      // The old operator ran any image a group named; ours only those the chart allows (its trust boundary).
      List<String> images = f.groupImages().stream()
          .filter(i -> !KeepalivedSettings.defaults().imageAllowed(i)).sorted().toList();
      if (!images.isEmpty()) {
        b.append(" --set-json 'controllers.keepalived.trust.allowedImages=[")
            .append(String.join(",", images.stream().map(i -> "\"" + i + "\"").toList())).append("]'");
      }
    }
    if (f.operator() == OldOperator.EIP) {
      Map<String, String> env = new LinkedHashMap<>();
      f.deployments().forEach(d -> d.env().forEach(env::putIfAbsent));
      EIP_SETTINGS.forEach((var, value) -> {
        String v = env.get(var);
        if (v != null && !v.isBlank()) {
          b.append(var.equals("DEFAULT_TAGS") ? " --set-json '" + value + "=" + v + "'"
              : " --set controllers.eip.settings." + value + "=" + v);
        }
      });
      if (env.getOrDefault("CLUSTER_NAME", "").isBlank()) {
        blockers.add(new Blocker("the old operator's CLUSTER_NAME is not known (no Deployment with it was found):"
            + " Elastic IPs are taken over by their cluster tag, so a wrong name leaks them",
            "add --set controllers.eip.settings.clusterName=<the old operator's CLUSTER_NAME> to the helm step"));
      }
    }
    return b.toString();
  }

  private static Map<String, String> eipSettings() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("CLUSTER_NAME", "clusterName");
    m.put("NAMESPACE", "namespace");
    m.put("AWS_REGION", "awsRegion");
    m.put("AWS_ENDPOINT_URL", "awsEndpoint");
    m.put("DEFAULT_TAGS", "controllers.eip.settings.defaultTags");
    return m;
  }
}
