package org.ipamoperators.testsupport.kube;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;

/**
 * The real apiserver refusing writes: a ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1)
 * that deny UPDATE (a PATCH or an apply of an existing object is an UPDATE to admission) and DELETE of the named
 * objects of one resource. A policy takes a moment (about 1-2 s) to take effect and to go, so {@link #start} returns only once a
 * write to a probe object of the same resource is refused, and {@link #close} only once one is accepted again; the
 * window in between is the one a test counts.
 */
public final class WriteRefusal implements AutoCloseable {
  private static final ResourceDefinitionContext POLICY = new ResourceDefinitionContext.Builder()
      .withGroup("admissionregistration.k8s.io").withVersion("v1").withKind("ValidatingAdmissionPolicy")
      .withPlural("validatingadmissionpolicies").withNamespaced(false).build();
  private static final ResourceDefinitionContext BINDING = new ResourceDefinitionContext.Builder()
      .withGroup("admissionregistration.k8s.io").withVersion("v1").withKind("ValidatingAdmissionPolicyBinding")
      .withPlural("validatingadmissionpolicybindings").withNamespaced(false).build();

  private final KubernetesClient client;
  private final String name;
  private final IntConsumer probe;
  private final AtomicInteger probes = new AtomicInteger();
  private Instant effective;
  private Instant lifted;

  private WriteRefusal(KubernetesClient client, String name, IntConsumer probe) {
    this.client = client;
    this.name = name;
    this.probe = probe;
  }

  /**
   * Refuses UPDATE and DELETE of {@code names} (and of {@code probeName}) of {@code apiGroup}/{@code resource} (e.g.
   * {@code services/status}); {@code probe} makes a real change to the probe object (its argument differs each
   * time). Returns once a probe write is refused.
   */
  public static WriteRefusal start(KubernetesClient client, String name, String apiGroup, String resource,
      List<String> names, String probeName, IntConsumer probe) {
    String list = java.util.stream.Stream.concat(names.stream(), java.util.stream.Stream.of(probeName))
        .map(n -> "'" + n + "'").collect(Collectors.joining(", "));
    String policy = """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata:
          name: %s
        spec:
          failurePolicy: Fail
          matchConstraints:
            resourceRules:
              - apiGroups: ["%s"]
                apiVersions: ["*"]
                operations: ["UPDATE", "DELETE"]
                resources: ["%s"]
          validations:
            - expression: "!(request.name in [%s])"
              message: "refused by the test's write refusal %s"
        """.formatted(name, apiGroup, resource, list, name);
    String binding = """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata:
          name: %s
        spec:
          policyName: %s
          validationActions: ["Deny"]
        """.formatted(name, name);
    var serialization = client.getKubernetesSerialization();
    client.genericKubernetesResources(POLICY).resource(serialization.unmarshal(policy,
        GenericKubernetesResource.class)).create();
    client.genericKubernetesResources(BINDING).resource(serialization.unmarshal(binding,
        GenericKubernetesResource.class)).create();
    WriteRefusal r = new WriteRefusal(client, name, probe);
    until(() -> !r.probeAccepted(), "a probe write refused by " + name);
    r.effective = Instant.now();
    return r;
  }

  /** When the refusal was seen to take effect. */
  public Instant effective() {
    return effective;
  }

  /** How long writes were refused (effective to lifted), once lifted. */
  public Duration window() {
    return Duration.between(effective, lifted == null ? Instant.now() : lifted);
  }

  private boolean probeAccepted() {
    try {
      probe.accept(probes.incrementAndGet());
      return true;
    } catch (KubernetesClientException e) {
      if (e.getMessage() != null && e.getMessage().contains(name)) {
        return false;
      }
      throw e;
    }
  }

  /** Lifts the refusal; returns once a probe write is accepted again. */
  @Override
  public void close() {
    if (lifted != null) {
      return;
    }
    client.genericKubernetesResources(BINDING).withName(name).delete();
    client.genericKubernetesResources(POLICY).withName(name).delete();
    until(this::probeAccepted, "a probe write accepted after lifting " + name);
    lifted = Instant.now();
  }

  /** Polls every 100 ms for at most 30 s (the policy's propagation takes a second or two). */
  private static void until(BooleanSupplier done, String what) {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new IllegalStateException("not seen within 30 s: " + what);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }
}
