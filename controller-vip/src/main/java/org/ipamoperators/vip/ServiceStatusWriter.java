package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerStatus;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.plan.VipProblem;

/**
 * Writes what a Service shows of its addresses: {@code status.loadBalancer.ingress} and our
 * condition {@value VipAnnotations#CONDITION}, together in one status write and only when either
 * changed (the transition time kept while the condition's status stays the same).
 */
final class ServiceStatusWriter {
  private final KubernetesClient client;

  ServiceStatusWriter(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Writes the ingress and the condition saying why (in one status write, only when something
   * changed). Returns the addresses the Service shows afterwards.
   */
  List<String> publish(Service svc, Ingress published, List<VipProblem> problems, String key) {
    List<String> ingress = published.or(VipServices.ingress(svc));
    Optional<VipProblem> blocking = problems.stream().filter(VipProblem::blocking).findFirst();
    Optional<VipProblem> remark = problems.stream().filter(p -> !p.blocking()).findFirst();
    Condition c;
    if (blocking.isPresent()) {
      c = condition(false, blocking.get().reason().name(), String.join("; ",
          problems.stream().filter(VipProblem::blocking).map(VipProblem::message).toList()));
    } else if (remark.isPresent()) {
      c = condition(true, remark.get().reason().name(), String.join("; ", problems.stream().map(VipProblem::message).toList()));
    } else {
      c = condition(true, key == null ? "Assigned" : "Shared", (key == null ? "" : "shared under key " + key + ": ")
          + String.join(", ", ingress));
    }
    write(svc, published, c);
    return ingress;
  }

  private static Condition condition(boolean ok, String reason, String message) {
    return new ConditionBuilder().withType(VipAnnotations.CONDITION).withStatus(ok ? "True" : "False")
        .withReason(reason).withMessage(message.length() > 32000 ? message.substring(0, 32000) : message).build();
  }

  private static Optional<Condition> current(Service svc) {
    if (svc.getStatus() == null || svc.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return svc.getStatus().getConditions().stream().filter(c -> VipAnnotations.CONDITION.equals(c.getType())).findFirst();
  }

  private static boolean same(Optional<Condition> a, Condition b) {
    return a.isPresent() && a.get().getStatus().equals(b.getStatus()) && a.get().getReason().equals(b.getReason())
        && a.get().getMessage().equals(b.getMessage());
  }

  /** Sets the ingress and our condition (null: removes it). */
  void write(Service svc, Ingress published, Condition condition) {
    List<String> ips = published.or(VipServices.ingress(svc));
    Optional<Condition> now = current(svc);
    boolean conditionSame = condition == null ? now.isEmpty() : same(now, condition);
    if (VipServices.ingress(svc).equals(ips) && conditionSame) {
      return;
    }
    List<LoadBalancerIngress> ingress = ips.stream().map(ip -> new LoadBalancerIngressBuilder().withIp(ip).build()).toList();
    String since = Instant.now().toString();
    client.services().inNamespace(svc.getMetadata().getNamespace()).withName(svc.getMetadata().getName())
        .editStatus(s -> {
          if (s.getStatus() == null) {
            s.setStatus(new ServiceStatus());
          }
          s.getStatus().setLoadBalancer(new LoadBalancerStatus(ingress.isEmpty() ? null : ingress));
          List<Condition> conditions = new ArrayList<>();
          Condition previous = null;
          if (s.getStatus().getConditions() != null) {
            for (Condition x : s.getStatus().getConditions()) {
              if (VipAnnotations.CONDITION.equals(x.getType())) {
                previous = x;
              } else {
                conditions.add(x);
              }
            }
          }
          if (condition != null) {
            condition.setObservedGeneration(s.getMetadata().getGeneration());
            condition.setLastTransitionTime(previous != null && previous.getStatus().equals(condition.getStatus())
                ? previous.getLastTransitionTime() : since);
            conditions.add(condition);
          }
          s.getStatus().setConditions(conditions);
          return s;
        });
  }

}
