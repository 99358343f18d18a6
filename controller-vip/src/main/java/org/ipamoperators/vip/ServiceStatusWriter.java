package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.plan.VipProblem;

/**
 * Writes what a Service shows of its addresses: {@code status.loadBalancer.ingress} and our
 * condition {@value VipAnnotations#CONDITION}, together in one status write and only when either
 * changed (the transition time kept while the condition's status stays the same): one PATCH, no read.
 * A write that changes the ingress is conditioned on the resourceVersion of the Service it was planned
 * from, so a view that is behind (a second replica acting as leader for a moment, with an informer that
 * has not yet seen the first one's write) can never replace addresses the Service already shows.
 */
final class ServiceStatusWriter {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Object metadata only (no spec, no status), else JSON as usual. */
  private static final String METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
  private final KubernetesClient client;
  private final OwnStatusWrites ownWrites;

  /** The Service changed since the view the write was planned from (409): nothing was written. */
  static final class StaleView extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StaleView(Service svc, Throwable cause) {
      super("Service " + svc.getMetadata().getNamespace() + "/" + svc.getMetadata().getName()
          + " changed since resourceVersion " + svc.getMetadata().getResourceVersion(), cause);
    }
  }

  /** Noting in {@code ownWrites} the writes whose echo needs no reconcile. */
  ServiceStatusWriter(KubernetesClient client, OwnStatusWrites ownWrites) {
    this.client = client;
    this.ownWrites = ownWrites;
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

  /**
   * Sets the ingress and our condition (null: removes it) in one strategic-merge PATCH of the status,
   * without reading the Service first: the ingress list is replaced whole (an atomic list), our
   * condition is merged by its type (others' conditions stay), and the transition time is kept from
   * the Service as the informer showed it while the condition's status stays the same.
   */
  void write(Service svc, Ingress published, Condition condition) {
    List<String> ips = published.or(VipServices.ingress(svc));
    Optional<Condition> now = current(svc);
    boolean conditionSame = condition == null ? now.isEmpty() : same(now, condition);
    boolean ingressChanges = !VipServices.ingress(svc).equals(ips);
    if (!ingressChanges && conditionSame) {
      return;
    }
    Map<String, Object> loadBalancer = new LinkedHashMap<>();
    loadBalancer.put("ingress", ips.isEmpty() ? null : ips.stream().map(ip -> Map.of("ip", ip)).toList());
    Map<String, Object> cond = new LinkedHashMap<>();
    cond.put("type", VipAnnotations.CONDITION);
    if (condition == null) {
      cond.put("$patch", "delete");
    } else {
      cond.put("status", condition.getStatus());
      cond.put("reason", condition.getReason());
      cond.put("message", condition.getMessage());
      cond.put("observedGeneration", svc.getMetadata().getGeneration());
      cond.put("lastTransitionTime", now.isPresent() && now.get().getStatus().equals(condition.getStatus())
          && now.get().getLastTransitionTime() != null ? now.get().getLastTransitionTime() : Instant.now().toString());
    }
    Map<String, Object> status = new LinkedHashMap<>();
    if (ingressChanges) {
      status.put("loadBalancer", loadBalancer); // else left out: a view that is behind must not write it back
    }
    status.put("conditions", List.of(cond));
    Map<String, Object> body = new LinkedHashMap<>();
    String version = svc.getMetadata().getResourceVersion();
    if (ingressChanges && version != null) {
      body.put("metadata", Map.of("resourceVersion", version)); // the API server answers 409 if it changed
    }
    body.put("status", status);
    String patch;
    try {
      patch = JSON.writeValueAsString(body);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    // Noted before it is sent: the informer may bring the write back before its answer arrives here.
    Object expected = ownWrites.writing(svc, ips, condition);
    int code;
    try {
      code = send(svc, patch);
    } catch (RuntimeException e) {
      ownWrites.failed(svc, expected);
      throw e;
    }
    if (code == 409) {
      ownWrites.failed(svc, expected);
      throw new StaleView(svc, new KubernetesClientException("Conflict", 409, null));
    }
  }

  /**
   * Sends the PATCH on the client's HTTP client (its authentication, retries and timeouts) and reads
   * only the response's status: the body is the whole Service, which the informer brings anyway, so
   * decoding it would cost CPU per Service for nothing. The body is asked for as object metadata only
   * (a smaller answer, where the API server honours it). Returns 2xx or 409; any other answer is
   * thrown as the client's own exception.
   */
  private int send(Service svc, String patch) {
    String ns = svc.getMetadata().getNamespace();
    String name = svc.getMetadata().getName();
    HttpClient http = client.getHttpClient();
    String master = client.getMasterUrl().toString();
    String base = master.endsWith("/") ? master : master + "/"; // a server behind a path prefix keeps it
    HttpRequest request;
    try {
      request = http.newHttpRequestBuilder()
          .url(new URL(base + "api/v1/namespaces/" + ns + "/services/" + name + "/status"))
          .setHeader("Accept", METADATA_ONLY)
          .method("PATCH", PatchType.STRATEGIC_MERGE.getContentType(), patch)
          .build();
    } catch (MalformedURLException e) {
      throw new IllegalArgumentException(e);
    }
    HttpResponse<byte[]> response;
    try {
      response = http.sendAsync(request, byte[].class).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted writing the status of Service " + ns + "/" + name, e);
    } catch (ExecutionException e) {
      throw new KubernetesClientException("writing the status of Service " + ns + "/" + name + ": "
          + e.getCause().getMessage(), e.getCause());
    }
    int code = response.code();
    if (response.isSuccessful() || code == 409) {
      return code;
    }
    Status status = null;
    try {
      byte[] body = response.body();
      status = body == null || body.length == 0 ? null
          : client.getKubernetesSerialization().unmarshal(new String(body, StandardCharsets.UTF_8), Status.class);
    } catch (RuntimeException e) {
      // not a Status: the code says enough
    }
    throw new KubernetesClientException("Failure executing: PATCH of the status of Service " + ns + "/" + name
        + ". Received status: " + code + (status == null || status.getMessage() == null ? "" : ", " + status.getMessage()),
        code, status);
  }
}
