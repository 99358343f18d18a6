package org.ipamoperators.cli.operator;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.cli.StartFailure;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.EgressIPControllers;
import org.ipamoperators.egressip.EgressSettings;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.eip.EipControllers;
import org.ipamoperators.eip.EipSettings;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.vip.VipControllers;
import org.ipamoperators.vip.VipSettings;
import org.ipamoperators.vip.api.IPGroup;

/** The controllers {@code ipam operator --controllers} can run, and the CRDs each needs. */
public final class OperatorControllers {

  /** A CRD a controller needs: its name, the generated YAML on the classpath, and its Java type. */
  public record RequiredCrd(String name, String resource, Class<? extends HasMetadata> type) {}

  /**
   * Registers one controller's reconcilers on an operator; returns what to run once this replica
   * leads (at once without leader election): work no reconcile would start, such as a sweep of the
   * claims of objects deleted while no leader watched.
   */
  interface Registrar {
    Runnable register(Operator operator, KubernetesClient client, MeterRegistry registry, Settings settings);
  }

  private static final Runnable NOTHING_ON_LEADING = () -> { };

  /**
   * The controllers' settings from {@code ipam operator}'s options, one record per controller that has settings;
   * {@code eip} is null unless eip runs.
   *
   * @param providers finds egressip's NodeNetwork providers: the class path and the provider jars (ProviderJars)
   */
  record Settings(EgressSettings egress, VipSettings vip, KeepalivedSettings keepalived, EipSettings eip,
      ClassLoader providers) {
    static Settings defaults() {
      return new Settings(EgressSettings.defaults(), VipSettings.defaults(), KeepalivedSettings.defaults(), null,
          OperatorControllers.class.getClassLoader());
    }
  }

  public record Controller(String name, String description, List<RequiredCrd> crds, Registrar registrar) {}

  static final RequiredCrd IPCLAIMS = new RequiredCrd("ipclaims.ipam.ipamoperators.org",
      "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml", IPClaim.class);
  static final RequiredCrd IPBLOCKS = new RequiredCrd("ipblocks.ipam.ipamoperators.org",
      "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml", IPBlock.class);
  static final RequiredCrd EGRESSIPAMS = new RequiredCrd("egressipams.redhatcop.redhat.io",
      "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml", EgressIPAM.class);
  static final RequiredCrd IDCLAIMS = new RequiredCrd("idclaims.ipam.ipamoperators.org",
      "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml", IDClaim.class);
  static final RequiredCrd KEEPALIVEDGROUPS = new RequiredCrd("keepalivedgroups.redhatcop.redhat.io",
      "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml", KeepalivedGroup.class);
  static final RequiredCrd IPGROUPS = new RequiredCrd("ipgroups.paas.org",
      "META-INF/fabric8/ipgroups.paas.org-v1.yml", IPGroup.class);

  static final RequiredCrd EIPS = new RequiredCrd("eips.materialize.cloud",
      "META-INF/fabric8/eips.materialize.cloud-v1.yml", Eip.class);

  /** The controllers by name, in the order of the help; fixed when the class loads. */
  private static final Map<String, Controller> KNOWN = known();

  private static Map<String, Controller> known() {
    Map<String, Controller> known = new LinkedHashMap<>();
    add(known, new Controller("egressip", "EgressIPAM: egress IPs for namespaces (OpenShift SDN, OVN-Kubernetes)",
        List.of(IPCLAIMS, IPBLOCKS, EGRESSIPAMS),
        (op, client, registry, settings) -> {
          EgressIPControllers.register(op, client, registry, settings.providers(), settings.egress());
          return NOTHING_ON_LEADING;
        }));
    add(known, new Controller("vip", "IPGroup: LoadBalancer IPs from pools into status.loadBalancer.ingress",
        List.of(IPCLAIMS, IPGROUPS),
        (op, client, registry, settings) -> VipControllers.register(op, client, registry, settings.vip())));
    add(known, new Controller("keepalived", "KeepalivedGroup: keepalived DaemonSets that announce Service VIPs over VRRP",
        List.of(IDCLAIMS, KEEPALIVEDGROUPS),
        (op, client, registry, settings) -> {
          KeepalivedControllers.register(op, client, registry, settings.keepalived());
          return NOTHING_ON_LEADING;
        }));
    add(known, new Controller("eip", "Eip: AWS Elastic IPs for pods and nodes (k8s-eip-operator's API)",
        List.of(IPCLAIMS, EIPS),
        (op, client, registry, settings) -> {
          EipControllers.register(op, client, registry, settings.eip());
          return NOTHING_ON_LEADING;
        }));
    return java.util.Collections.unmodifiableMap(known);
  }

  private OperatorControllers() {
  }

  private static void add(Map<String, Controller> known, Controller c) {
    known.put(c.name(), c);
  }

  public static List<String> names() {
    return List.copyOf(KNOWN.keySet());
  }

  public static Optional<Controller> byName(String name) {
    return Optional.ofNullable(KNOWN.get(name));
  }

  /** The controllers {@code --controllers} names, each once in the order given; none or an unknown name exits 2. */
  static List<Controller> select(List<String> requested) throws StartFailure {
    Set<String> names = new LinkedHashSet<>();
    for (String c : requested) {
      String n = c.trim().toLowerCase(Locale.ROOT);
      if (!n.isEmpty()) {
        names.add(n);
      }
    }
    if (names.isEmpty()) {
      throw new StartFailure(2, "--controllers names no controller; known: " + String.join(", ", names()));
    }
    List<Controller> out = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String n : names) {
      byName(n).ifPresentOrElse(out::add, () -> unknown.add(n));
    }
    if (!unknown.isEmpty()) {
      throw new StartFailure(2, (unknown.size() == 1 ? "unknown controller '" : "unknown controllers '")
          + String.join("', '", unknown) + "'; known: " + String.join(", ", names()));
    }
    return out;
  }

  /** The CRDs the given controllers need, each once, in a stable order. */
  public static List<RequiredCrd> crds(List<Controller> controllers) {
    Map<String, RequiredCrd> out = new LinkedHashMap<>();
    for (Controller c : controllers) {
      c.crds().forEach(crd -> out.putIfAbsent(crd.name(), crd));
    }
    return new ArrayList<>(out.values());
  }
}
