package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;

/** Registers everything the keepalived feature runs on an operator. */
public final class KeepalivedControllers {
  private KeepalivedControllers() {}

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    register(operator, client, registry, KeepalivedSettings.fromEnvironment());
  }

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      KeepalivedSettings settings) {
    operator.register(new KeepalivedGroupReconciler(client, settings, registry));
    operator.register(new ServiceAttachmentReconciler(client));
    operator.register(new OrphanRouterIdReconciler(client));
  }
}
