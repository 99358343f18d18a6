package org.ipamoperators.vip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import org.ipamoperators.vip.legacy.LegacyAdoption;
import org.ipamoperators.vip.legacy.VirtualIPMigration;

/** Registers everything the VIP feature runs on an operator. */
public final class VipControllers {
  private VipControllers() {}

  /**
   * Adopts the old operator's IP objects into the ledger first (so no Service changes address),
   * then registers the Service and IPGroup controllers and starts the legacy VirtualIP migration
   * when that kind is installed. Returns what to run once this replica leads: the orphan sweep's start
   * (the first reconcile starts it too, but none comes when every Service and IPGroup is gone). The settings are
   * the environment's ({@link VipSettings#fromEnvironment}: {@code IPAM_VIP_HANDLE_UNCLASSED},
   * {@code IPAM_VIP_SWEEP_INTERVAL}); a bad one throws, naming its variable.
   */
  public static Runnable register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    return register(operator, client, registry, VipSettings.fromEnvironment());
  }

  /** The same, with these settings. */
  public static Runnable register(Operator operator, KubernetesClient client, MeterRegistry registry,
      VipSettings settings) {
    return register(operator, client, registry, java.util.Set.of(), settings);
  }

  /** The same, serving only the Services of {@code namespaces} (all namespaces when empty). */
  public static Runnable register(Operator operator, KubernetesClient client, MeterRegistry registry,
      java.util.Set<String> namespaces) {
    return register(operator, client, registry, namespaces, VipSettings.fromEnvironment());
  }

  /** The same, serving only the Services of {@code namespaces} (all namespaces when empty), with these settings. */
  public static Runnable register(Operator operator, KubernetesClient client, MeterRegistry registry,
      java.util.Set<String> namespaces, VipSettings settings) {
    LegacyAdoption.adopt(client);
    VipMetrics metrics = new VipMetrics(registry);
    ServiceVipReconciler services = new ServiceVipReconciler(client, metrics, namespaces, settings);
    operator.register(services, o -> {
      services.configure(o);
      if (!namespaces.isEmpty()) {
        o.settingNamespaces(namespaces);
      }
    });
    // Its reconciles run on the leader only, like the Services': the first one starts the orphan sweep.
    operator.register(new IPGroupStatusReconciler(metrics, services::leading));
    new VirtualIPMigration(client, settings).start();
    return services::leading;
  }
}
