package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;

/**
 * Tells a namespace that its egressipam annotation names no EgressIPAM (reference scenario 45):
 * the IPAM controller never runs for a missing IPAM, so without this the namespace would wait in
 * silence. Looks again now and then, in case the name was a typo about to be fixed elsewhere.
 */
@ControllerConfiguration(name = "egressipam-namespace-references", generationAwareEventProcessing = false)
public class NamespaceReferenceReconciler implements Reconciler<Namespace> {
  private final KubernetesClient client;
  private final EventRecorder events;

  public NamespaceReferenceReconciler(KubernetesClient client) {
    this.client = client;
    this.events = new EventRecorder(client, "egressipam-controller");
  }

  @Override
  public UpdateControl<Namespace> reconcile(Namespace ns, Context<Namespace> context) {
    var annotations = ns.getMetadata().getAnnotations();
    String ipam = annotations == null ? null : annotations.get(EgressAnnotations.EGRESSIPAM);
    if (ipam == null || ns.getMetadata().getDeletionTimestamp() != null) {
      return UpdateControl.noUpdate();
    }
    if (client.resources(EgressIPAM.class).withName(ipam).get() == null) {
      events.warning(ns, "EgressIPAMNotFound", "annotation " + EgressAnnotations.EGRESSIPAM + " names EgressIPAM '"
          + ipam + "', which does not exist; no egress IP is assigned until it does");
      return UpdateControl.<Namespace>noUpdate().rescheduleAfter(Duration.ofMinutes(5));
    }
    return UpdateControl.noUpdate();
  }
}
