package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * The old vip-allocator-operator's kinds (paas.org/v1), read without classes of our own so that no
 * CRD is generated for them: {@code IP} (cluster-scoped, named after the address, label
 * {@code ipgroup}, owner annotation {@code virtualips.paas.il/owner: <namespace>/<service>}) and the
 * legacy {@code VirtualIP} (namespaced).
 */
public final class LegacyKinds {
  private LegacyKinds() {}

  public static final ResourceDefinitionContext IP = new ResourceDefinitionContext.Builder().withGroup("paas.org")
      .withVersion("v1").withKind("IP").withPlural("ips").withNamespaced(false).build();
  public static final ResourceDefinitionContext VIRTUAL_IP = new ResourceDefinitionContext.Builder()
      .withGroup("paas.org").withVersion("v1").withKind("VirtualIP").withPlural("virtualips").withNamespaced(true).build();

  public static final String LABEL_IPGROUP = "ipgroup";
  public static final String LABEL_GSM = "gsm";
  public static final String OWNER_ANNOTATION = "virtualips.paas.il/owner";
  public static final String MIGRATE_ANNOTATION = "virtualips.paas.org/migrate";
  public static final String VIP_IP_FINALIZER = "ip.finalizers.virtualips.paas.org";
  public static final String VIP_SERVICE_FINALIZER = "service.finalizers.virtualips.paas.org";
  public static final String CLONE_SUFFIX = "-keepalived-clone";

  public static final String STATE_VALID = "Valid";
  public static final String STATE_ERROR = "Error";
  public static final String PREPARING = "Migrating: preparing for migration";
  public static final String REASSOCIATING = "Migrating: reassociating IP object";
  public static final String CLEANING_UP = "Migrating: cleaning up";
  public static final String CONVERTING = "Migrating: converting service";
  public static final String ASSIGNING = "Migrating: assigning original IP";
  public static final String MIGRATED = "Migrated";
}
