package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import java.util.function.Supplier;

/** The ARM clients, the settings and the shared state through which every part of one Azure network calls. */
record ArmAccess(AzureClients.Clients clients, AzureSettings settings, AzureNetworkState state) {
  /** One ARM call, timed and with its failure as an {@link ArmCallFailed} naming the call. */
  <T> T call(String name, Supplier<T> body) {
    return ArmCallFailed.call(name, state.metrics, body);
  }

  NetworkInterfaceInner getNic(AzureIds.Id nicId) {
    return call("GetNetworkInterface", () -> clients.network().getNetworkInterfaces()
        .getByResourceGroup(nicId.resourceGroup(), nicId.name()));
  }
}
