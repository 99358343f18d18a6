package org.ipamoperators.controller.common.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;

/**
 * Who holds a claimed address: the controller that made the claim and the object it serves (a
 * Namespace, a Service, a KeepalivedGroup...). The uid is recorded for garbage collection and
 * audit; identity is controller, kind, namespace and name, so a claim survives its owner being
 * re-created under the same name (the same address comes back, as users expect).
 *
 * <p>A new object with an old object's name adopts the old object's
 * claims. That never gives one address two live holders: the API server lets only one object of a
 * kind, namespace and name exist at a time (a terminating one keeps the name until it is gone), and
 * the controllers release an owner's claims before its finalizer goes; a claim left behind (the
 * finalizer removed by hand, a controller not running) goes to the next object of that name rather
 * than being lost. Tested in ClusterLedgerIT and ClusterIdLedgerIT.
 *
 * <p>controller-vip is the exception: its Services carry no finalizer, so a Service may
 * be re-created under its name before the old one's claim is released. There a Service is also
 * its uid ({@code org.ipamoperators.vip.plan.ServiceOwners}): the new one gets a claim of its own,
 * the old claim goes with the old Service's delete event or the orphan sweep.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ClaimOwner(@Required String controller, @Required String kind, String namespace,
    @Required String name, String uid) {

  public boolean sameAs(ClaimOwner other) {
    return other != null && controller.equals(other.controller) && kind.equals(other.kind)
        && java.util.Objects.equals(namespace, other.namespace) && name.equals(other.name);
  }

  /** "Namespace payments (egressip)" for messages. */
  public String describe() {
    return kind + " " + (namespace == null ? "" : namespace + "/") + name + " (" + controller + ")";
  }
}
