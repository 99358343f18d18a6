package org.ipamoperators.cloud.azure;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Azure resource ids: the parts this module needs, compared without regard to case (Azure changes it). */
final class AzureIds {
  private static final Pattern RESOURCE = Pattern.compile(
      "^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/([^/]+/[^/]+)/([^/]+)(/.*)?$",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern SCALE_SET = Pattern.compile("/virtualMachineScaleSets/", Pattern.CASE_INSENSITIVE);
  private static final Pattern SCALE_SET_VM = Pattern.compile("^azure:///subscriptions/([^/]+)/resourceGroups/([^/]+)/"
      + "providers/Microsoft\\.Compute/virtualMachineScaleSets/([^/]+)/virtualMachines/([^/]+)$", Pattern.CASE_INSENSITIVE);

  private AzureIds() {}

  /** subscription, resource group, type, name of a top-level resource id (or the parent of a child id). */
  record Id(String subscription, String resourceGroup, String type, String name) {
    String id() {
      return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup + "/providers/" + type + "/" + name;
    }
  }

  static Optional<Id> parse(String id) {
    if (id == null) {
      return Optional.empty();
    }
    Matcher m = RESOURCE.matcher(id);
    return m.matches() ? Optional.of(new Id(m.group(1), m.group(2), m.group(3), m.group(4))) : Optional.empty();
  }

  /**
   * The VM of a node's {@code spec.providerID}
   * ({@code azure:///subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/NAME}).
   */
  static Optional<Id> vmOfProviderId(String providerId) {
    if (providerId == null || !providerId.toLowerCase(Locale.ROOT).startsWith("azure://")) {
      return Optional.empty();
    }
    String path = providerId.substring("azure://".length());
    if (SCALE_SET.matcher(path).find()) {
      return Optional.empty();
    }
    return parse(path).filter(i -> i.type().equalsIgnoreCase("Microsoft.Compute/virtualMachines"));
  }

  /** An instance of a Uniform scale set, as its node's providerID names it. */
  record ScaleSetVm(String subscription, String resourceGroup, String scaleSet, String instanceId) {
    String id() {
      return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup
          + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + scaleSet + "/virtualMachines/" + instanceId;
    }

    /** Its NIC {@code name} as an {@link Id} whose {@link Id#id()} is the NIC's full id under the instance. */
    Id nic(String name) {
      return new Id(subscription, resourceGroup, "Microsoft.Compute/virtualMachineScaleSets/" + scaleSet
          + "/virtualMachines/" + instanceId + "/networkInterfaces", name);
    }
  }

  /** {@code azure:///subscriptions/S/resourceGroups/RG/providers/Microsoft.Compute/virtualMachineScaleSets/SS/virtualMachines/I}. */
  static Optional<ScaleSetVm> scaleSetVmOfProviderId(String providerId) {
    Matcher m = SCALE_SET_VM.matcher(providerId == null ? "" : providerId.trim());
    return m.matches() ? Optional.of(new ScaleSetVm(m.group(1), m.group(2), m.group(3), m.group(4))) : Optional.empty();
  }

  static boolean isScaleSet(String providerId) {
    return providerId != null && SCALE_SET.matcher(providerId).find();
  }

  /** The last segment of an id (a child's name). */
  static String last(String id) {
    return id.substring(id.lastIndexOf('/') + 1);
  }

  static boolean same(String a, String b) {
    return a != null && a.equalsIgnoreCase(b);
  }
}
