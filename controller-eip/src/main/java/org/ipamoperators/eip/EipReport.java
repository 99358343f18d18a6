package org.ipamoperators.eip;

import static org.ipamoperators.eip.StatusDraft.COND_CONFLICT;
import static org.ipamoperators.eip.StatusDraft.COND_QUOTA;
import static org.ipamoperators.eip.StatusDraft.COND_READY;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What users see of a reconcile: the Events and conditions, worded here, and the status written once at the end
 * with the metrics and when to look again.
 */
final class EipReport {
  private static final Logger LOG = LoggerFactory.getLogger(EipReport.class);
  private final EventRecorder events;
  private final EipMetrics metrics;
  private final KubeApply kube;

  EipReport(EventRecorder events, EipMetrics metrics, KubeApply kube) {
    this.events = events;
    this.metrics = metrics;
    this.kube = kube;
  }

  void invalidSpec(Eip eip, StatusDraft status, String problem) {
    events.warning(eip, "InvalidSpec", problem);
    status.condition(COND_READY, false, "InvalidSpec", problem);
  }

  void upgradedFromV1(Eip eip) {
    LOG.info("Eip {}: v1 spec.podName moved into spec.selector.pod.podName", eip.key());
    events.normal(eip, "UpgradedFromV1", "spec.podName " + eip.getSpec().podName()
        + " moved into spec.selector.pod.podName");
  }

  void awsError(Eip eip, StatusDraft status, String message) {
    LOG.info("Eip {}: {}", eip.key(), message);
    events.warning(eip, "AwsError", message);
    status.condition(COND_READY, false, "AwsError", message);
  }

  void cannotRelease(Eip eip, String message) {
    events.warning(eip, "AwsError", "cannot release the address: " + message);
  }

  // --- the address ---------------------------------------------------------------------------------

  void duplicateReleased(Eip eip, ElasticIp duplicate, ElasticIp kept) {
    events.warning(eip, "DuplicateAddressReleased", "released " + duplicate.publicIp() + " ("
        + duplicate.allocationId() + "), a second address tagged with this Eip's UID; kept " + kept.publicIp());
  }

  void retagged(Eip eip, ElasticIp a) {
    LOG.info("Eip {}: {} ({}) found by the allocation id in its status, not by its tags: tagged again",
        eip.key(), a.publicIp(), a.allocationId());
    events.normal(eip, "AddressRetagged", a.publicIp() + " (" + a.allocationId() + ") was found by the"
        + " allocation id in the status but not by its tags: tagged again");
  }

  void adopted(Eip eip, ElasticIp a, Map<String, String> adoptTags) {
    events.normal(eip, "AddressAdopted", "adopted " + a.publicIp() + " (" + a.allocationId()
        + "), chosen by tags " + adoptTags);
  }

  void noAddressToAdopt(StatusDraft status, Map<String, String> adoptTags) {
    status.condition(COND_READY, false, "NoAddressToAdopt", "no unassociated address without an Eip carries"
        + " the tags " + adoptTags);
  }

  void allocated(Eip eip, ElasticIp a) {
    events.normal(eip, "AddressAllocated", "allocated " + a.publicIp() + " (" + a.allocationId() + ")");
  }

  void quotaExceeded(Eip eip, StatusDraft status, String usage) {
    String message = "the region's Elastic IP quota is used up" + usage + ": raise the quota (EC2-VPC Elastic"
        + " IPs, L-0263D0A3) or release addresses";
    events.warning(eip, "QuotaExceeded", message);
    status.condition(COND_QUOTA, true, "AddressLimitExceeded", message);
    status.condition(COND_READY, false, "QuotaExceeded", message);
  }

  /** Recorded in the status at once, before anything else: the UID tag finds it again anyway. */
  void newAddress(Eip eip, StatusDraft status, ElasticIp a) {
    status.address(a.allocationId(), a.publicIp());
    kube.patchStatus(eip, Map.of("allocationId", a.allocationId(), "publicIpAddress", a.publicIp()));
  }

  void hasAddress(StatusDraft status, ElasticIp a) {
    status.condition(COND_QUOTA, false, "Allocated", "the Eip has an address");
    status.address(a.allocationId(), a.publicIp());
  }

  void claimedElsewhere(Eip eip, ElasticIp a, String holder) {
    events.warning(eip, "AddressClaimedElsewhere", a.publicIp() + " is claimed by " + holder
        + " in the cluster's ledger");
  }

  void staleCopy(Eip eip, Eip live) {
    LOG.info("Eip {} (uid {}) is {} in the apiserver: no address allocated for this stale copy", eip.key(),
        eip.getMetadata().getUid(), live == null ? "gone" : live.getMetadata().getDeletionTimestamp() != null
            ? "being deleted" : "replaced (uid " + live.getMetadata().getUid() + ")");
  }

  void deleted(Eip eip, ElasticIp a, boolean retained) {
    if (retained) {
      LOG.info("Eip {} deleted: {} retained (reclaimPolicy Retain), untagged", eip.key(), a.publicIp());
    } else {
      LOG.info("Eip {} deleted: {} released", eip.key(), a.publicIp());
    }
  }

  // --- association ---------------------------------------------------------------------------------

  void disassociated(Eip eip, ElasticIp address, String message) {
    events.normal(eip, "Disassociated", address.publicIp() + " disassociated from " + address.privateIp() + ": "
        + message);
  }

  void detached(StatusDraft status, String reason, String message) {
    status.detached();
    status.condition(COND_READY, false, reason, message);
  }

  void conflict(Eip eip, StatusDraft status, String message) {
    events.warning(eip, "Conflict", message);
    status.condition(COND_CONFLICT, true, "PodSelectedByAnotherEip", message);
  }

  void noConflict(StatusDraft status, String podName) {
    status.condition(COND_CONFLICT, false, "NoConflict", "no other Eip selects pod " + podName);
  }

  void podUnreachable(HasMetadata pod, StatusDraft status, String reason, String message) {
    events.warning(pod, reason, message);
    status.condition(COND_READY, false, reason, message);
  }

  void podEniAnnotationInvalid(HasMetadata pod, String annotation) {
    events.warning(pod, "PodEniAnnotationInvalid", "annotation " + annotation + " is not a JSON"
        + " list with an eniId: the ENI is looked up on the instance instead");
  }

  void movesToPod(Eip eip, ElasticIp address, String podName, String podIp) {
    LOG.info("Eip {}: {} moves from {} to pod {} ({})", eip.key(), address.publicIp(), address.privateIp(),
        podName, podIp);
  }

  void associatedWithPod(Eip eip, ElasticIp address, String podName, String podIp, String eni) {
    events.normal(eip, "Associated", address.publicIp() + " associated with pod " + podName + " (" + podIp
        + " on " + eni + ")");
  }

  void onPod(StatusDraft status, ElasticIp address, String eni, String podIp, String podName) {
    status.attached(eni, podIp, podName, address.associationId());
    status.condition(COND_READY, true, "Associated", address.publicIp() + " is associated with pod " + podName);
  }

  void autocreatedDeleted(String ns, String podName) {
    LOG.info("pod {}/{} terminating: its autocreated Eip is deleted (its address is released)", ns, podName);
  }

  // --- the end -------------------------------------------------------------------------------------

  /** Writes the status when it changed, updates the metrics, asks to be called again after {@code again}. */
  UpdateControl<Eip> finish(Eip eip, StatusDraft draft, Duration again) {
    EipStatus status = draft.build();
    metrics.eip(eip.key(), status.allocationId() != null, status.associationId() != null);
    if (!status.equals(eip.getStatus())) {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("allocationId", status.allocationId());
      s.put("publicIpAddress", status.publicIpAddress());
      s.put("eni", status.eni());
      s.put("privateIpAddress", status.privateIpAddress());
      s.put("resourceId", status.resourceId());
      s.put("associationId", status.associationId());
      s.put("conditions", status.conditions());
      s.put("observedGeneration", status.observedGeneration());
      kube.patchStatus(eip, s);
    }
    UpdateControl<Eip> control = UpdateControl.noUpdate();
    return again == null ? control : control.rescheduleAfter(again);
  }
}
