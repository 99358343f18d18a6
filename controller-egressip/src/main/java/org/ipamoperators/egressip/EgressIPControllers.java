package org.ipamoperators.egressip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;

/** Registers everything the egress IP feature runs on an operator. */
public final class EgressIPControllers {
  private EgressIPControllers() {}

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    operator.register(new EgressIPAMReconciler(client, Clock.systemUTC(), registry));
    operator.register(new NamespaceReferenceReconciler(client));
  }
}
