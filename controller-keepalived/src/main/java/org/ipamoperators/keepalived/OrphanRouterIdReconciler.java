package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases router ids whose KeepalivedGroup no longer exists: normally the group's finalizer releases them, but a
 * group deleted with its finalizer removed by hand (or while no operator ran and then force-removed) leaves them
 * behind, and nothing else would ever free them. The group is read from the API server, not a cache, so a claim is
 * never released for a group that exists.
 */
@ControllerConfiguration(name = "keepalived-router-id-orphans", generationAwareEventProcessing = false,
    informer = @Informer(labelSelector = "ipam.ipamoperators.org/controller=" + RouterIds.CONTROLLER),
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 10, timeUnit = TimeUnit.MINUTES))
public class OrphanRouterIdReconciler implements Reconciler<IDClaim> {
  private static final Logger LOG = LoggerFactory.getLogger(OrphanRouterIdReconciler.class);
  private final KubernetesClient client;
  private final ClusterIdLedger ledger;

  public OrphanRouterIdReconciler(KubernetesClient client) {
    this.client = client;
    this.ledger = new ClusterIdLedger(client);
  }

  @Override
  public UpdateControl<IDClaim> reconcile(IDClaim claim, Context<IDClaim> context) {
    ClaimOwner owner = claim.getSpec() == null ? null : claim.getSpec().owner();
    if (owner == null || !RouterIds.CONTROLLER.equals(owner.controller()) || !"KeepalivedGroup".equals(owner.kind())
        || owner.namespace() == null) {
      return UpdateControl.noUpdate();
    }
    KeepalivedGroup group = client.resources(KeepalivedGroup.class).inNamespace(owner.namespace())
        .withName(owner.name()).get();
    if (group == null && ledger.release(claim.getMetadata().getName(), owner)) {
      LOG.info("router id {} of {} released: the group no longer exists", claim.getMetadata().getName(),
          owner.describe());
    }
    return UpdateControl.noUpdate();
  }
}
