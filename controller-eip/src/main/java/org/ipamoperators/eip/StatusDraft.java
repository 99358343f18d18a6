package org.ipamoperators.eip;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipStatus;

/** The status being worked out; written once at the end (and the address alone right after allocation). */
final class StatusDraft {
  static final String COND_READY = "Ready";
  static final String COND_CONFLICT = "Conflict";
  static final String COND_QUOTA = "QuotaExceeded";

  final Eip eip;
  String allocationId;
  String publicIp;
  String eni;
  String privateIp;
  String resourceId;
  String associationId;
  List<Condition> conditions;
  String readyReason;
  String readyMessage;
  /** This reconcile changed (or tried to change) the Eip's addresses in AWS. */
  boolean awsChanged;

  StatusDraft(Eip eip) {
    this.eip = eip;
    EipStatus s = eip.getStatus();
    if (s != null) {
      allocationId = s.allocationId();
      publicIp = s.publicIpAddress();
      eni = s.eni();
      privateIp = s.privateIpAddress();
      resourceId = s.resourceId();
      associationId = s.associationId();
      conditions = s.conditions();
    }
  }

  void condition(String type, boolean value, String reason, String message) {
    conditions = Conditions.set(conditions, type, value, reason, message, eip.getMetadata().getGeneration());
    if (COND_READY.equals(type)) {
      readyReason = reason;
      readyMessage = message;
    }
  }

  void address(String allocationId, String publicIp) {
    this.allocationId = allocationId;
    this.publicIp = publicIp;
  }

  void attached(String eni, String privateIp, String resourceId, String associationId) {
    this.eni = eni;
    this.privateIp = privateIp;
    this.resourceId = resourceId;
    this.associationId = associationId;
  }

  void detached() {
    attached(null, null, null, null);
  }

  EipStatus build() {
    return new EipStatus(allocationId, publicIp, eni, privateIp, resourceId, associationId, conditions,
        eip.getMetadata().getGeneration());
  }
}
