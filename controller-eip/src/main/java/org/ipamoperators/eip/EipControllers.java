package org.ipamoperators.eip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import org.ipamoperators.cloud.aws.eip.ElasticIps;

/** Registers everything the Eip feature runs on an operator. */
public final class EipControllers {
  private EipControllers() {}

  /** With the settings from the environment (the old operator's variables). */
  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    register(operator, client, registry, EipSettings.fromEnvironment());
  }

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      EipSettings settings) {
    register(operator, client, registry, settings, ElasticIps.create(settings.aws()));
  }

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      EipSettings settings, ElasticIps ec2) {
    EipReconciler eips = new EipReconciler(client, settings, ec2, registry);
    operator.register(eips, o -> {
      o.withReconciliationMaxInterval(settings.resyncInterval());
      if (settings.namespace() != null) {
        o.settingNamespaces(Set.of(settings.namespace()));
      }
    });
    operator.register(new EipPodReconciler(client), o -> {
      if (settings.namespace() != null) {
        o.settingNamespaces(Set.of(settings.namespace()));
      }
    });
    operator.register(new EipSweepReconciler(client, settings, ec2, eips.metrics()));
  }
}
