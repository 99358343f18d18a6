package org.ipamoperators.vip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;

/** Registers everything the VIP feature runs on an operator. */
public final class VipControllers {
  private VipControllers() {}

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    operator.register(new ServiceVipReconciler(client));
    operator.register(new IPGroupStatusReconciler());
  }
}
