package org.ipamoperators.eip;

import static org.ipamoperators.eip.EipReads.annotation;
import static org.ipamoperators.eip.EipReads.labels;
import static org.ipamoperators.eip.EipReads.podName;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.plan.PodAction;
import org.ipamoperators.eip.plan.PodClaimant;

/**
 * Pod mode of {@link EipReconciler}: the pod and the other Eips selecting it are read from the caches,
 * {@link PodAction} decides, and the address is associated with the pod's IP (on its branch ENI, else on the
 * instance's interface holding it) or detached; the pod holding it carries the annotations external-dns reads.
 */
final class PodMode {
  private final KubernetesClient client;
  private final ElasticIps ec2;
  private final Ec2Apply apply;
  private final KubeApply kube;
  private final EipReport report;
  private final NodeMode.Detach detacher;
  private volatile InformerEventSource<Pod, Eip> pods;

  PodMode(KubernetesClient client, ElasticIps ec2, Ec2Apply apply, KubeApply kube, EipReport report,
      NodeMode.Detach detacher) {
    this.client = client;
    this.ec2 = ec2;
    this.apply = apply;
    this.kube = kube;
    this.report = report;
    this.detacher = detacher;
  }

  void pods(InformerEventSource<Pod, Eip> pods) {
    this.pods = pods;
  }

  /** Carries out what {@link PodAction} decides for this Eip's address and pod, in AWS, on the pod, in the status. */
  void reconcile(Eip eip, String podName, ElasticIp address, StatusDraft status, Context<Eip> context) {
    String ns = eip.getMetadata().getNamespace();
    // Several Eips for one pod: one wins, the others hold nothing.
    List<PodClaimant> rivals = context.getPrimaryCache().list(ns, e -> !e.getMetadata().getUid()
        .equals(eip.getMetadata().getUid()) && e.getMetadata().getDeletionTimestamp() == null
        && podName.equals(podName(e))).map(e -> EipReads.claimant(e, podName)).toList();
    Optional<Pod> pod = pods.get(new ResourceID(podName, ns));
    PodAction action = PodAction.of(EipReads.claimant(eip, podName), rivals, podName, pod.map(EipReads::view),
        address);
    if (action instanceof PodAction.Conflict c) {
      report.conflict(eip, status, c.message());
      detacher.detach(eip, address, status, "Conflict", c.message());
      return;
    }
    report.noConflict(status, podName);
    if (action instanceof PodAction.Detach d) {
      detacher.detach(eip, address, status, d.reason(), d.message());
      if (pod.isPresent() && pod.get().getMetadata().getDeletionTimestamp() != null) {
        podTerminating(eip, pod.get());
      }
      return;
    }
    Pod p = pod.orElseThrow();
    if (action instanceof PodAction.Associate a) {
      Optional<String> eni = podEni(p, a, status);
      if (eni.isEmpty()) {
        detacher.detach(eip, address, status, status.readyReason, status.readyMessage);
        return;
      }
      if (a.moving()) {
        report.movesToPod(eip, address, podName, a.podIp());
      }
      address = apply.associate(address, eni.get(), a.podIp(), status);
      report.associatedWithPod(eip, address, podName, a.podIp(), eni.get());
    }
    unannotatePrevious(eip, podName);
    annotate(p, address);
    report.onPod(status, address, address.networkInterfaceId(), address.privateIp(), podName);
  }

  /** The pod's ENI: its branch ENI (security groups for pods), else the instance's interface holding its IP. */
  private Optional<String> podEni(Pod pod, PodAction.Associate a, StatusDraft status) {
    String branch = annotation(pod, EipNames.POD_ENI_ANNOTATION);
    if (branch != null) {
      Optional<String> eni = EipReads.branchEni(branch);
      if (eni.isPresent()) {
        return eni;
      }
      report.podEniAnnotationInvalid(pod, EipNames.POD_ENI_ANNOTATION);
    }
    // A live read: the node informer watches only nodes labelled for node mode.
    Node node = client.nodes().withName(a.nodeName()).get();
    String providerId = node == null ? null : node.getSpec().getProviderID();
    Optional<String> instance = ElasticIps.instanceId(providerId);
    if (instance.isEmpty()) {
      report.podUnreachable(pod, status, "NotOnAws", "cannot resolve instance: node " + a.nodeName()
          + " has no AWS provider id (" + (providerId == null ? "none" : providerId) + "); Fargate and non-AWS"
          + " nodes cannot hold an Elastic IP");
      return Optional.empty();
    }
    Optional<String> eni = ec2.interfaceHolding(instance.get(), a.podIp());
    if (eni.isEmpty()) {
      report.podUnreachable(pod, status, "EniNotFound", "pod IP " + a.podIp() + " is on no network interface of "
          + instance.get() + " (node " + a.nodeName() + "): the pod has no VPC address (the AWS VPC CNI, or Cilium"
          + " in ENI mode, gives it one)");
    }
    return eni;
  }

  /**
   * A terminating pod (JOSDK does not reconcile a pod being deleted without a finalizer of its own, so its Eip
   * does): once its address is disassociated the old operator's finalizer goes, and its autocreated Eip is deleted,
   * which releases the address.
   */
  private void podTerminating(Eip eip, Pod pod) {
    String name = pod.getMetadata().getName();
    LegacyFinalizers.removeFromPod(client, pod);
    if (EipReads.autocreated(eip, name) && eip.getMetadata().getName().equals(name)
        && "true".equalsIgnoreCase(labels(pod).get(EipNames.AUTOCREATE_LABEL))
        && eip.getMetadata().getDeletionTimestamp() == null) {
      kube.deleteEip(eip);
      report.autocreatedDeleted(pod.getMetadata().getNamespace(), name);
    }
  }

  /** The annotations external-dns and users read, on the pod holding the address. */
  private void annotate(Pod pod, ElasticIp address) {
    Map<String, String> a = pod.getMetadata().getAnnotations() == null ? Map.of() : pod.getMetadata().getAnnotations();
    if (address.allocationId().equals(a.get(EipNames.ALLOCATION_ID_ANNOTATION))
        && address.publicIp().equals(a.get(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION))) {
      return;
    }
    kube.podAnnotations(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), address.allocationId(),
        address.publicIp());
  }

  /** Removes our annotations from the pod the status named, when the address is no longer there. */
  void unannotatePrevious(Eip eip, String exceptPod) {
    String previous = eip.getStatus() == null ? null : eip.getStatus().resourceId();
    if (previous == null || previous.equals(exceptPod) || podName(eip) == null) {
      return;
    }
    unannotate(eip, previous);
  }

  /** A live read: the pod may no longer carry the label the pod informer selects by. */
  void unannotate(Eip eip, String podName) {
    Pod pod = client.pods().inNamespace(eip.getMetadata().getNamespace()).withName(podName).get();
    if (pod == null || pod.getMetadata().getAnnotations() == null) {
      return;
    }
    String allocation = pod.getMetadata().getAnnotations().get(EipNames.ALLOCATION_ID_ANNOTATION);
    String ours = eip.getStatus() == null ? null : eip.getStatus().allocationId();
    if (allocation == null || (ours != null && !ours.equals(allocation))) {
      return; // another Eip's by now
    }
    kube.podAnnotations(eip.getMetadata().getNamespace(), podName, null, null);
  }
}
