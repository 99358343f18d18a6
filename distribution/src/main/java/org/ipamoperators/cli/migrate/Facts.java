package org.ipamoperators.cli.migrate;

import java.util.List;
import java.util.Map;

/** What {@code ipam migrate} reads from the cluster, as values the planner decides on. */
public final class Facts {
  private Facts() {}

  /**
   * A CRD found in the cluster.
   *
   * @param applyManagers the field managers owning its {@code spec.versions} by a server-side apply
   * @param otherManagers the other field managers owning {@code spec.versions} (e.g. {@code kubectl-client-side-apply})
   */
  public record Crd(String name, List<String> served, List<String> stored, List<String> applyManagers,
      List<String> otherManagers) {}

  /** One of our CRDs for an old kind: the versions it serves. */
  public record OurCrd(String name, String file, List<String> served) {}

  /** A Deployment of an old operator; {@code env} holds its first container's plain environment values. */
  public record Deployment(String namespace, String name, int replicas, List<String> images, Map<String, String> env) {}

  /** Something the new controller takes over as it is, e.g. a namespace's egress addresses. */
  public record Held(String kind, String ref, String what) {}

  /**
   * An object checked with our controller's own validation.
   *
   * @param problems what the controller would refuse, empty when accepted
   */
  public record Checked(String kind, String ref, List<String> problems) {}

  /**
   * Everything found for one old operator.
   *
   * @param groupImages the images KeepalivedGroups name in {@code spec.image}
   */
  public record Found(OldOperator operator, List<Crd> crds, List<OurCrd> ours, List<Deployment> deployments,
      Map<String, Integer> counts, List<Held> held, List<Checked> checked, List<String> groupImages) {

    public Found(OldOperator operator, List<Crd> crds, List<OurCrd> ours, List<Deployment> deployments,
        Map<String, Integer> counts, List<Held> held, List<Checked> checked) {
      this(operator, crds, ours, deployments, counts, held, checked, List.of());
    }

    public boolean nothing() {
      return crds.isEmpty() && deployments.isEmpty();
    }
  }
}
