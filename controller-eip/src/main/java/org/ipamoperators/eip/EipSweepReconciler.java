package org.ipamoperators.eip;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Field;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIpException;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.plan.OrphanSweep;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The periodic orphan sweep and quota reading. Its primary is the {@code default} Namespace, which always exists,
 * only so that it runs where the reconcilers run (on the leader) and again every sweep interval. Releases addresses
 * tagged with our cluster (and namespace, when scoped) whose Eip UID no longer exists ({@link OrphanSweep}); never
 * untagged addresses nor another cluster's or namespace's. One failing address does not stop the others.
 */
@ControllerConfiguration(name = "eip-orphan-sweep", generationAwareEventProcessing = false,
    informer = @Informer(fieldSelector = @Field(path = "metadata.name", value = "default")))
public class EipSweepReconciler implements Reconciler<Namespace> {
  private static final Logger LOG = LoggerFactory.getLogger(EipSweepReconciler.class);
  private final KubernetesClient client;
  private final EipSettings settings;
  private final ElasticIps ec2;
  private final EipMetrics metrics;
  private final ClusterLedger ledger;

  public EipSweepReconciler(KubernetesClient client, EipSettings settings, ElasticIps ec2, EipMetrics metrics) {
    this.client = client;
    this.settings = settings;
    this.ec2 = ec2;
    this.metrics = metrics;
    this.ledger = new ClusterLedger(client);
  }

  @Override
  public UpdateControl<Namespace> reconcile(Namespace ignored, Context<Namespace> context) {
    sweep();
    return UpdateControl.<Namespace>noUpdate().rescheduleAfter(settings.sweepInterval());
  }

  /**
   * Terminating pods still carrying the old operator's finalizer that no Eip holds (no Eip reconciles them): taken
   * over while terminating, or their Eip deleted meanwhile.
   */
  private void releaseTerminatingPods(List<Eip> eips) {
    var pods = settings.namespace() == null ? client.pods().inAnyNamespace().withLabel(EipNames.MANAGE_LABEL).list()
        : client.pods().inNamespace(settings.namespace()).withLabel(EipNames.MANAGE_LABEL).list();
    for (var p : pods.getItems()) {
      if (p.getMetadata().getDeletionTimestamp() == null || p.getMetadata().getFinalizers() == null) {
        continue;
      }
      boolean held = eips.stream().anyMatch(e -> e.getStatus() != null && e.getStatus().associationId() != null
          && p.getMetadata().getNamespace().equals(e.getMetadata().getNamespace())
          && p.getMetadata().getName().equals(e.getStatus().resourceId()) && EipReads.podName(e) != null);
      if (!held) {
        LegacyFinalizers.removeFromPod(client, p);
      }
    }
  }

  /** One sweep; returns the addresses released. */
  List<ElasticIp> sweep() {
    Map<String, String> filter = new TreeMap<>();
    filter.put(EipNames.TAG_CLUSTER, settings.clusterName());
    if (settings.namespace() != null) {
      filter.put(EipNames.TAG_NAMESPACE, settings.namespace());
    }
    List<ElasticIp> found;
    try {
      found = ec2.withTags(filter);
    } catch (ElasticIpException e) {
      LOG.warn("orphan sweep: cannot list the cluster's addresses: {}", e.getMessage());
      return List.of();
    }
    // Listed after the addresses: see OrphanSweep.
    List<Eip> eips = settings.namespace() == null ? client.resources(Eip.class).inAnyNamespace().list().getItems()
        : client.resources(Eip.class).inNamespace(settings.namespace()).list().getItems();
    Set<String> live = eips.stream().map(e -> e.getMetadata().getUid()).collect(Collectors.toSet());
    List<ElasticIp> orphans = OrphanSweep.orphans(found, settings.clusterName(), settings.namespace(), live);
    List<ElasticIp> released = new java.util.ArrayList<>();
    for (ElasticIp a : orphans) {
      try {
        if (a.associated()) {
          ec2.disassociate(a.associationId());
        }
        ec2.release(a.allocationId());
        released.add(a);
        LOG.info("orphan sweep: released {} ({}) of Eip {}/{} (uid {}), which no longer exists", a.publicIp(),
            a.allocationId(), a.tag(EipNames.TAG_NAMESPACE), a.tag(EipNames.TAG_NAME), a.tag(EipNames.TAG_UID));
        ledger.get(Ip.parse(a.publicIp())).filter(c -> EipReads.CONTROLLER.equals(c.getSpec().owner().controller()))
            .ifPresent(c -> ledger.release(Ip.parse(a.publicIp()), c.getSpec().owner()));
      } catch (ElasticIpException e) {
        LOG.warn("orphan sweep: cannot release {} ({}): {}", a.publicIp(), a.allocationId(), e.getMessage());
      }
    }
    releaseTerminatingPods(eips);
    try {
      int used = ec2.count();
      ec2.quota().ifPresent(q -> metrics.quota(q, used));
    } catch (ElasticIpException e) {
      LOG.info("cannot read the Elastic IP quota: {}", e.getMessage());
    }
    return released;
  }
}
