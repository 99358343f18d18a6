package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases router ids (and metrics ports) whose KeepalivedGroup no longer exists: a deleted group's finalizer retires
 * them ({@link RouterIds#retireAll}), and they are released here once the grace has passed (the retirement time is on
 * the claim, so a restart changes nothing); a group deleted with its finalizer removed by hand (or while no operator
 * ran and then force-removed) leaves them unretired, released at once, since nothing else would ever free them. The
 * group is read from the API server, not a cache, so a claim is never released for a group that exists.
 */
@ControllerConfiguration(name = "keepalived-router-id-orphans", generationAwareEventProcessing = false,
    informer = @Informer(labelSelector = "ipam.ipamoperators.org/controller=" + RouterIds.CONTROLLER),
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 10, timeUnit = TimeUnit.MINUTES))
public class OrphanRouterIdReconciler implements Reconciler<IDClaim> {
  private static final Logger LOG = LoggerFactory.getLogger(OrphanRouterIdReconciler.class);
  private static final Duration GONE_SOON = Duration.ofSeconds(5);
  private final KubernetesClient client;
  private final ClusterIdLedger ledger;
  private final Duration grace;
  private final Clock clock;

  public OrphanRouterIdReconciler(KubernetesClient client, Duration grace) {
    this.client = client;
    this.ledger = new ClusterIdLedger(client);
    this.grace = grace;
    this.clock = Clock.systemUTC();
  }

  @Override
  public UpdateControl<IDClaim> reconcile(IDClaim claim, Context<IDClaim> context) {
    ClaimOwner owner = claim.getSpec() == null ? null : claim.getSpec().owner();
    if (owner == null || !RouterIds.CONTROLLER.equals(owner.controller()) || !"KeepalivedGroup".equals(owner.kind())
        || owner.namespace() == null) {
      return UpdateControl.noUpdate();
    }
    Optional<Instant> retired = ClusterIdLedger.retiredAt(claim);
    if (retired.isPresent()) {
      // Its pods may still use it: taken until the grace has passed (the label counts whole seconds: one more).
      Duration left = Duration.between(clock.instant(), retired.get().plus(grace).plusSeconds(1));
      if (left.compareTo(Duration.ZERO) > 0) {
        return UpdateControl.<IDClaim>noUpdate().rescheduleAfter(left);
      }
    }
    KeepalivedGroup group = client.resources(KeepalivedGroup.class).inNamespace(owner.namespace())
        .withName(owner.name()).get();
    if (group != null && retired.isPresent() && group.getMetadata().getDeletionTimestamp() != null) {
      return UpdateControl.<IDClaim>noUpdate().rescheduleAfter(GONE_SOON); // its finalizer is about to go
    }
    if (group == null && ledger.release(claim.getMetadata().getName(), owner)) {
      LOG.info("{} of {} released: the group no longer exists{}", claim.getMetadata().getName(), owner.describe(),
          retired.isPresent() ? " and its grace has passed" : "");
    }
    return UpdateControl.noUpdate();
  }
}
