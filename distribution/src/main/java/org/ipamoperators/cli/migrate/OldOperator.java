package org.ipamoperators.cli.migrate;

import java.util.List;
import java.util.Locale;

/**
 * The four operators this suite replaces: how to recognise each in a cluster (its CRDs, the names its
 * manifests give its Deployment, its image) and which of our controllers and CRD files take over.
 */
public enum OldOperator {
  EGRESSIP("egressip-ipam-operator", "egressip",
      List.of(new Kind("egressipams.redhatcop.redhat.io", "redhatcop.redhat.io", "EgressIPAM", "egressipams", false,
          "egressipams.redhatcop.redhat.io-v1.yml")),
      List.of("egressip-ipam-operator")),
  KEEPALIVED("keepalived-operator", "keepalived",
      List.of(new Kind("keepalivedgroups.redhatcop.redhat.io", "redhatcop.redhat.io", "KeepalivedGroup",
          "keepalivedgroups", true, "keepalivedgroups.redhatcop.redhat.io-v1.yml")),
      List.of("keepalived-operator")),
  VIP("vip-allocator-operator", "vip",
      List.of(new Kind("ipgroups.paas.org", "paas.org", "IPGroup", "ipgroups", false, "ipgroups.paas.org-v1.yml"),
          new Kind("ips.paas.org", "paas.org", "IP", "ips", false, null),
          new Kind("virtualips.paas.org", "paas.org", "VirtualIP", "virtualips", true, null)),
      List.of("vip-allocator-operator", "keepalived-allocator-operator")),
  EIP("k8s-eip-operator", "eip",
      List.of(new Kind("eips.materialize.cloud", "materialize.cloud", "Eip", "eips", true, "eips.materialize.cloud-v1.yml")),
      List.of("k8s-eip-operator", "eip-operator"));

  /**
   * One kind of the old operator.
   *
   * @param crd the CRD's name
   * @param ourCrdFile the file of our CRD for it in the chart's {@code crds/}; null when we ship none (the kind
   *     is only read, as vip's {@code IP} and {@code VirtualIP})
   */
  public record Kind(String crd, String group, String kind, String plural, boolean namespaced, String ourCrdFile) {}

  private final String project;
  private final String controller;
  private final List<Kind> kinds;
  private final List<String> names;

  OldOperator(String project, String controller, List<Kind> kinds, List<String> names) {
    this.project = project;
    this.controller = controller;
    this.kinds = kinds;
    this.names = names;
  }

  /** The old project's name, as the report titles its section. */
  public String project() {
    return project;
  }

  /** Our controller taking over: its chart key {@code controllers.<controller>}. */
  public String controller() {
    return controller;
  }

  public List<Kind> kinds() {
    return kinds;
  }

  /**
   * Whether a Deployment is this operator's: its name is one its manifests give (kustomize's
   * {@code <project>-controller-manager}, or the project's name), or a container runs its image.
   */
  public boolean runs(String deploymentName, List<String> images) {
    String name = deploymentName.toLowerCase(Locale.ROOT);
    for (String n : names) {
      if (name.equals(n) || name.equals(n + "-controller-manager")) {
        return true;
      }
    }
    return images.stream().map(OldOperator::repositoryName).anyMatch(names::contains);
  }

  /** The last path segment of an image reference without tag or digest: {@code registry.example/a/b:1} gives {@code b}. */
  static String repositoryName(String image) {
    String s = image;
    int at = s.indexOf('@');
    if (at >= 0) {
      s = s.substring(0, at);
    }
    int slash = s.lastIndexOf('/');
    int colon = s.lastIndexOf(':');
    if (colon > slash) {
      s = s.substring(0, colon);
    }
    return s.substring(slash + 1).toLowerCase(Locale.ROOT);
  }
}
