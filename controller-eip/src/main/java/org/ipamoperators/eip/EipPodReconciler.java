package org.ipamoperators.eip;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.eip.plan.Autocreate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pods labelled {@code eip.materialize.cloud/manage}: creates the Eip named after a pod labelled
 * {@code autocreate_eip=true} (owned by the pod) unless another Eip already selects the pod, and deletes it when the
 * pod terminates (see {@link EipReconciler}), which releases its address. Adds no finalizer to pods: a pending
 * pod, or one that never gets an IP, is never held up. The old operator's pod finalizer is removed: nothing needs
 * it (an Eip whose pod is gone disassociates its address at its next reconcile).
 */
@ControllerConfiguration(name = "eip-pods", generationAwareEventProcessing = false,
    informer = @Informer(labelSelector = EipNames.MANAGE_LABEL))
public class EipPodReconciler implements Reconciler<Pod> {
  private static final Logger LOG = LoggerFactory.getLogger(EipPodReconciler.class);
  private static final Duration WAIT_FOR_DISASSOCIATION = Duration.ofSeconds(1);
  private final KubernetesClient client;
  private final EventRecorder events;

  public EipPodReconciler(KubernetesClient client) {
    this.client = client;
    this.events = new EventRecorder(client, "eip-controller");
  }

  @Override
  public UpdateControl<Pod> reconcile(Pod pod, Context<Pod> context) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    Map<String, String> labels = EipReads.labels(pod);
    boolean managed = labels.containsKey(EipNames.MANAGE_LABEL)
        && !"false".equalsIgnoreCase(labels.get(EipNames.MANAGE_LABEL));
    boolean autocreate = managed && "true".equalsIgnoreCase(labels.get(EipNames.AUTOCREATE_LABEL));
    // Live reads: the Eip of this name may have been created or deleted a moment ago, by this controller.
    Eip eip = client.resources(Eip.class).inNamespace(ns).withName(name).get();
    Autocreate.Named named = eip == null ? null : new Autocreate.Named(eip.getMetadata().getDeletionTimestamp()
        != null, EipReads.podName(eip), describe(eip));

    // Never called for a terminating pod (it has no finalizer of ours): EipReconciler handles those.
    LegacyFinalizers.removeFromPod(client, pod);
    List<String> manual = Autocreate.needsManual(autocreate, named) ? selecting(ns, name) : List.of();
    Autocreate decision = Autocreate.of(name, autocreate, named, manual);
    if (decision instanceof Autocreate.WaitForDeletion) {
      return UpdateControl.<Pod>noUpdate().rescheduleAfter(Duration.ofSeconds(2)); // the last pod's, going
    }
    if (decision instanceof Autocreate.Conflict c) {
      events.warning(pod, "Conflict", c.message());
    }
    if (decision instanceof Autocreate.Create) {
      create(pod);
    }
    return UpdateControl.noUpdate();
  }

  /** The live Eips of the namespace selecting the pod. */
  private List<String> selecting(String ns, String podName) {
    List<String> manual = new ArrayList<>();
    for (Eip e : client.resources(Eip.class).inNamespace(ns).list().getItems()) {
      if (podName.equals(EipReads.podName(e)) && e.getMetadata().getDeletionTimestamp() == null) {
        manual.add(e.getMetadata().getName());
      }
    }
    return manual;
  }

  /** The Eip named after the pod, owned by it (without blocking its deletion); one made meanwhile wins. */
  private void create(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    Eip eip = new Eip();
    eip.getMetadata().setName(name);
    eip.getMetadata().setNamespace(ns);
    eip.getMetadata().setLabels(Map.of(EipNames.AUTOCREATED_LABEL, "true"));
    eip.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod")
        .withName(name).withUid(pod.getMetadata().getUid()).withBlockOwnerDeletion(false).withController(false)
        .build()));
    eip.setSpec(EipSpec.of(EipSelector.pod(name)));
    try {
      client.resource(eip).create();
      LOG.info("pod {}/{}: Eip autocreated", ns, name);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
  }

  private static String describe(Eip e) {
    String pod = EipReads.podName(e);
    return pod != null ? "pod " + pod : "nodes " + EipReads.nodeSelector(e);
  }

}
