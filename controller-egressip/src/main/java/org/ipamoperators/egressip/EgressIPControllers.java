package org.ipamoperators.egressip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;

/** Registers everything the egress IP feature runs on an operator. */
public final class EgressIPControllers {
  private EgressIPControllers() {}

  /** With the providers on the class path and the settings of the environment ({@link EgressSettings#fromEnvironment}). */
  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    register(operator, client, registry, EgressIPControllers.class.getClassLoader());
  }

  /**
   * With the NodeNetwork providers {@code providers} finds (the class path, plus any provider jars it adds) and the
   * settings of the environment.
   */
  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      ClassLoader providers) {
    register(operator, client, registry, providers, EgressSettings.fromEnvironment());
  }

  /** With the NodeNetwork providers {@code providers} finds, and these settings. */
  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry,
      ClassLoader providers, EgressSettings settings) {
    // The NodeNetwork of the platform, from the providers found (see CloudNodeNetworks).
    operator.register(new EgressIPAMReconciler(client, Clock.systemUTC(), registry,
        new CloudNodeNetworks(client, settings.cloud(), providers), settings));
  }
}
