package org.ipamoperators.egressip;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;

/** Registers everything the egress IP feature runs on an operator. */
public final class EgressIPControllers {
  private EgressIPControllers() {}

  public static void register(Operator operator, KubernetesClient client, MeterRegistry registry) {
    // Bare metal, EC2 on AWS (credentials, region and endpoint: see CloudSettings), Azure (see AzureNetworks).
    CloudSettings cloud = CloudSettings.fromEnvironment();
    operator.register(new EgressIPAMReconciler(client, Clock.systemUTC(), registry, new CloudNodeNetworks(client, cloud,
        org.ipamoperators.egressip.cloud.AzureNetworks.fromEnvironment(client, cloud.operatorNamespace(), registry))));
    operator.register(new NamespaceReferenceReconciler(client));
  }
}
