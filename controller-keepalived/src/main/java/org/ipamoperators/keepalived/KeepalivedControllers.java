package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;

/** Registers everything the keepalived feature runs on an operator. */
public final class KeepalivedControllers {
  private KeepalivedControllers() {}

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    register(operator, client, registry, KeepalivedSettings.defaults());
  }

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      KeepalivedSettings settings) {
    var namespaces = settings.watchNamespaces();
    if (namespaces.isEmpty()) {
      operator.register(new KeepalivedGroupReconciler(client, settings, registry));
      operator.register(new ServiceAttachmentReconciler(client));
    } else {
      // Groups and Services only of these namespaces (their informers follow); Nodes, Namespaces and claims are
      // cluster-scoped.
      operator.register(new KeepalivedGroupReconciler(client, settings, registry), o -> o.settingNamespaces(namespaces));
      operator.register(new ServiceAttachmentReconciler(client), o -> o.settingNamespaces(namespaces));
    }
    operator.register(new OrphanRouterIdReconciler(client, settings.routerIdGrace()));
  }
}
