package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.ipamoperators.testsupport.kube.AuditEvent;
import org.ipamoperators.testsupport.kube.KubeApiServer;

/**
 * The chart's rules for one controller against the requests its ServiceAccount made, from the audit log of
 * an apiserver that keeps one ({@code @KubeApiTest(auditLog = true)}): every verb granted must have been used,
 * and no request may have been refused.
 */
final class RbacUsage {

  /** One verb on one resource (with its subresource) of one API group ({@code ""} for the core group). */
  record Grant(String apiGroup, String resource, String verb) implements Comparable<Grant> {
    @Override
    public String toString() {
      return (apiGroup.isEmpty() ? "core" : apiGroup) + " " + resource + " " + verb;
    }

    @Override
    public int compareTo(Grant o) {
      return toString().compareTo(o.toString());
    }
  }

  /** Verbs every controller holds and never requests. */
  static final Map<Grant, String> EVERY_CONTROLLER = Map.of(new Grant("coordination.k8s.io", "leases", "update"),
      "JOSDK's leader election reviews the rules at start (SelfSubjectRulesReview) and refuses to start without it; "
      + "renewals and the hand-back are patches");

  private RbacUsage() {}

  /** What the manifests grant the ServiceAccount: its ClusterRoles' and Roles' rules, verb by verb. */
  static Set<Grant> granted(List<HasMetadata> objects, ServiceAccount sa) {
    Set<Grant> out = new TreeSet<>();
    for (ClusterRoleBinding b : Manifests.ofType(objects, ClusterRoleBinding.class)) {
      if (binds(b.getSubjects(), sa)) {
        Manifests.ofType(objects, ClusterRole.class).stream()
            .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName()))
            .forEach(r -> expand(r.getRules(), out));
      }
    }
    for (RoleBinding b : Manifests.ofType(objects, RoleBinding.class)) {
      if (binds(b.getSubjects(), sa)) {
        Manifests.ofType(objects, Role.class).stream()
            .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName())
                && r.getMetadata().getNamespace().equals(b.getMetadata().getNamespace()))
            .forEach(r -> expand(r.getRules(), out));
      }
    }
    return out;
  }

  private static boolean binds(List<Subject> subjects, ServiceAccount sa) {
    return subjects.stream().anyMatch(s -> "ServiceAccount".equals(s.getKind())
        && sa.getMetadata().getName().equals(s.getName()) && sa.getMetadata().getNamespace().equals(s.getNamespace()));
  }

  private static void expand(List<PolicyRule> rules, Set<Grant> out) {
    for (PolicyRule rule : rules) {
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            out.add(new Grant(group, resource, verb));
          }
        }
      }
    }
  }

  static String username(ServiceAccount sa) {
    return "system:serviceaccount:" + sa.getMetadata().getNamespace() + ":" + sa.getMetadata().getName();
  }

  /**
   * The ServiceAccount's requests after {@code mark}, once the log holds them all: an admin request made now
   * (a get of a ConfigMap that does not exist) is awaited in the log, so every request completed before it is
   * there too.
   */
  static List<AuditEvent> requests(KubeApiServer server, long mark, ServiceAccount sa) {
    String marker = "rbac-audit-marker-" + Long.toHexString(System.nanoTime());
    assertThat(server.adminClient().configMaps().inNamespace(Manifests.NAMESPACE).withName(marker).get()).isNull();
    await().atMost(Duration.ofSeconds(30)).until(() -> server.auditEvents(mark).stream()
        .anyMatch(e -> marker.equals(e.name())));
    return server.auditEvents(mark).stream().filter(e -> username(sa).equals(e.username()) && e.resource() != null)
        .toList();
  }

  /**
   * Fails naming each granted verb no request used (unless {@code elsewhere} names the test that uses it), and
   * each request the apiserver refused.
   *
   * @param elsewhere verbs the scenario does not reach, each with the code path and the test that exercises it
   */
  static void assertExact(Set<Grant> granted, List<AuditEvent> requests, Map<Grant, String> elsewhere) {
    List<String> refused = requests.stream().filter(e -> e.code() == 403)
        .map(e -> e.verb() + " " + e.apiGroup() + " " + e.rbacResource() + " " + e.namespace() + "/" + e.name())
        .distinct().toList();
    Set<Grant> used = requests.stream().filter(e -> e.code() != 403)
        .map(e -> new Grant(e.apiGroup(), e.rbacResource(), e.verb())).collect(Collectors.toCollection(TreeSet::new));
    Set<Grant> unused = new TreeSet<>(granted);
    unused.removeAll(used);
    unused.removeIf(g -> excused(g, elsewhere.keySet()) || excused(g, EVERY_CONTROLLER.keySet()));
    assertThat(refused).as("requests the shipped rules refused").isEmpty();
    assertThat(unused).as("verbs the chart grants that no request used (used: %s)", used).isEmpty();
    assertThat(elsewhere.keySet()).as("each excuse names verbs the chart grants")
        .allSatisfy(e -> assertThat(granted).anyMatch(g -> excused(g, Set.of(e))));
  }

  /** {@code g} is named in {@code excuses}, verb by verb or by {@code *} for every verb of its resource. */
  private static boolean excused(Grant g, Set<Grant> excuses) {
    return excuses.contains(g) || excuses.contains(new Grant(g.apiGroup(), g.resource(), "*"));
  }

  /** An excuse: {@code verb} ({@code *}: every verb granted) on {@code resource} of {@code apiGroup}. */
  static Grant grant(String apiGroup, String resource, String verb) {
    return new Grant(apiGroup, resource, verb);
  }
}
