package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressAnnotations;

/**
 * Writes an EgressIPAM's decisions to OVN-Kubernetes: one cluster-scoped {@code k8s.ovn.org/v1
 * EgressIP} per served namespace, selecting it by name, and the {@code k8s.ovn.org/egress-assignable}
 * label on the nodes that may host egress IPs. OVN places and fails over the addresses itself. Our
 * objects carry a label naming the IPAM; nothing else is touched.
 *
 * <p>The EgressIP creates, updates and deletes go out side by side on the given executor (each object
 * is written on its own), then the node labels likewise. Every update carries the resourceVersion of
 * the object it was computed from, so if another writer changed it in between the API server answers
 * 409: reported as a failure, written again by the next pass from the fresh object. Every delete
 * likewise carries the uid and resourceVersion of the object it was decided from.
 */
public final class OvnWriter {
  static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips")
      .withNamespaced(false).build();
  private static final String NAME_PREFIX = "egressipam-";

  /** Where this IPAM's EgressIPs are read from, and who is told of the writer's writes. */
  public interface View {
    /** The EgressIPs labelled as this IPAM's, as last seen. */
    Collection<GenericKubernetesResource> mine(String ipam);

    /** An EgressIP as the API server returned it after our create or update (from the executor's threads). */
    default void wrote(GenericKubernetesResource written) {}

    /** An EgressIP we deleted, last seen at {@code resourceVersion} (from the executor's threads). */
    default void deleted(String name, String resourceVersion) {}
  }

  private final KubernetesClient client;
  private final View view;
  private final Executor executor;

  /** Listing this IPAM's EgressIPs from the API server, writing one object after the other (cleanup, tests). */
  public OvnWriter(KubernetesClient client) {
    this(client, listing(client), Runnable::run);
  }

  /**
   * @param view this IPAM's EgressIPs as last seen
   * @param executor where the writes run side by side
   */
  public OvnWriter(KubernetesClient client, View view, Executor executor) {
    this.client = client;
    this.view = view;
    this.executor = executor;
  }

  /** One listing of the IPAM's objects from the API server per pass (not one GET per namespace). */
  public static View listing(KubernetesClient client) {
    return ipam -> client.genericKubernetesResources(EGRESS_IP).withLabel(EgressAnnotations.MANAGED_BY, ipam)
        .list().getItems();
  }

  public static String objectName(String namespace) {
    return NAME_PREFIX + namespace;
  }

  /** Applies the write; {@code nodes}: every node as last seen (the informer's view). */
  public List<String> apply(NetworkWrite w, Collection<Node> nodes) {
    List<String> failures = Collections.synchronizedList(new ArrayList<>());
    Map<String, GenericKubernetesResource> mine = new HashMap<>();
    for (GenericKubernetesResource r : view.mine(w.ipam())) {
      mine.put(r.getMetadata().getName(), r);
    }
    List<Runnable> writes = new ArrayList<>();
    for (Map.Entry<String, List<Ip>> e : w.namespaces().entrySet()) {
      String name = objectName(e.getKey());
      List<String> ips = e.getValue().stream().map(Ip::toString).toList();
      GenericKubernetesResource current = mine.get(name);
      if (current != null && Objects.equals(spec(current).get("egressIPs"), ips)) {
        continue;
      }
      GenericKubernetesResource desired = new GenericKubernetesResourceBuilder()
          .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP")
          .withNewMetadata().withName(name).addToLabels(EgressAnnotations.MANAGED_BY, w.ipam()).endMetadata()
          .addToAdditionalProperties("spec", Map.of("egressIPs", ips, "namespaceSelector",
              Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", e.getKey()))))
          .build();
      writes.add(() -> write(w.ipam(), current, desired, failures));
    }
    for (GenericKubernetesResource r : mine.values()) {
      String ns = r.getMetadata().getName().substring(NAME_PREFIX.length());
      if (!w.namespaces().containsKey(ns)) {
        writes.add(() -> delete(r, failures));
      }
    }
    all(writes, failures);
    List<Runnable> labels = new ArrayList<>();
    for (Node n : nodes) {
      labels.add(() -> labelNode(w, n, failures));
    }
    all(labels, failures);
    return new ArrayList<>(failures);
  }

  /** Reading the nodes straight from the API server (cleanup). */
  public List<String> apply(NetworkWrite w) {
    return apply(w, client.nodes().list().getItems());
  }

  /**
   * Runs the writes side by side and waits for all of them; one that threw is recorded as a failure (a
   * bug in one write must not hide the others' outcome).
   */
  private void all(List<Runnable> writes, List<String> failures) {
    List<CompletableFuture<Void>> running = new ArrayList<>(writes.size());
    for (Runnable write : writes) {
      running.add(CompletableFuture.runAsync(write, executor).exceptionally(e -> {
        failures.add("write failed: " + (e.getCause() != null ? e.getCause() : e));
        return null;
      }));
    }
    running.forEach(CompletableFuture::join);
  }

  /** Creates the EgressIP ({@code current} null) or updates it from the version it was computed from. */
  private void write(String ipam, GenericKubernetesResource current, GenericKubernetesResource desired,
      List<String> failures) {
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    String name = desired.getMetadata().getName();
    try {
      if (current == null) {
        try {
          view.wrote(egressIps.resource(desired).create());
        } catch (KubernetesClientException ex) {
          if (ex.getCode() != 409) {
            throw ex;
          }
          // The view had not seen it: one we created in an earlier pass (a cache lags), or someone else's.
          GenericKubernetesResource existing = egressIps.withName(name).get();
          if (existing == null || !ipam.equals(ipamOf(existing))) {
            failures.add(existing == null ? "EgressIP " + name + ": " + ex.getMessage()
                : "EgressIP " + name + " exists and is not managed by EgressIPAM " + ipam);
          } else if (Objects.equals(spec(existing).get("egressIPs"), spec(desired).get("egressIPs"))) {
            view.wrote(existing);
          } else {
            desired.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
            view.wrote(egressIps.resource(desired).update());
          }
        }
      } else {
        desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
        view.wrote(egressIps.resource(desired).update());
      }
    } catch (KubernetesClientException ex) {
      failures.add("EgressIP " + name + ": " + ex.getMessage());
    }
  }

  /**
   * Deletes the EgressIP the decision was made from, and only that one: the request carries its uid and
   * resourceVersion as preconditions, so an object deleted and created again under the same name meanwhile
   * (by another EgressIPAM, or by hand) or changed since is left alone. The API server answers 409 (or 404
   * when it is gone): reported, and the next pass decides again from a fresh view.
   */
  private void delete(GenericKubernetesResource r, List<String> failures) {
    String name = r.getMetadata().getName();
    String uid = r.getMetadata().getUid();
    String version = r.getMetadata().getResourceVersion();
    if (uid == null && version == null) {
      failures.add("EgressIP " + name + ": not deleted, the view of it has neither uid nor resourceVersion");
      return;
    }
    try {
      int code = deleteIf(name, uid, version);
      if (code == 409 || code == 404) {
        failures.add("EgressIP " + name + ": not deleted, " + (code == 404 ? "already gone (404)"
            : "no longer the object seen (uid " + uid + ", resourceVersion " + version + "; 409)")
            + "; decided again from a fresh view");
        return;
      }
      view.deleted(name, version);
    } catch (KubernetesClientException ex) {
      failures.add("EgressIP " + name + ": " + ex.getMessage());
    }
  }

  /** A DELETE with preconditions (the client's own delete sends the resourceVersion only); 2xx, 404 or 409. */
  private int deleteIf(String name, String uid, String version) {
    Preconditions pre = new Preconditions();
    pre.setUid(uid);
    pre.setResourceVersion(version);
    String body = client.getKubernetesSerialization().asJson(new DeleteOptionsBuilder()
        .withApiVersion("v1").withKind("DeleteOptions").withPreconditions(pre).build());
    HttpClient http = client.getHttpClient();
    String master = client.getMasterUrl().toString();
    String base = master.endsWith("/") ? master : master + "/"; // a server behind a path prefix keeps it
    HttpResponse<byte[]> response;
    try {
      HttpRequest request = http.newHttpRequestBuilder()
          .url(new URL(base + "apis/" + EGRESS_IP.getGroup() + "/" + EGRESS_IP.getVersion() + "/"
              + EGRESS_IP.getPlural() + "/" + URLEncoder.encode(name, StandardCharsets.UTF_8)))
          .delete("application/json", body).build();
      response = http.sendAsync(request, byte[].class).get();
    } catch (MalformedURLException e) {
      throw new IllegalArgumentException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted deleting EgressIP " + name, e);
    } catch (ExecutionException e) {
      throw new KubernetesClientException("deleting EgressIP " + name + ": " + e.getCause().getMessage(), e.getCause());
    }
    int code = response.code();
    if (response.isSuccessful() || code == 404 || code == 409) {
      return code;
    }
    byte[] answer = response.body();
    throw new KubernetesClientException("DELETE of EgressIP " + name + " answered " + code
        + (answer == null ? "" : ": " + new String(answer, StandardCharsets.UTF_8)), code, null);
  }

  private void labelNode(NetworkWrite w, Node n, List<String> failures) {
    Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
    Map<String, String> annotations = n.getMetadata().getAnnotations() == null ? Map.of()
        : n.getMetadata().getAnnotations();
    boolean want = w.assignableNodes().contains(n.getMetadata().getName());
    boolean has = labels.containsKey(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
    boolean ourLabel = w.ipam().equals(annotations.get(EgressAnnotations.MANAGED_BY));
    try {
      if (want && !has) {
        client.nodes().withName(n.getMetadata().getName()).edit(x -> {
          x.getMetadata().getLabels().put(EgressAnnotations.OVN_EGRESS_ASSIGNABLE, "");
          if (x.getMetadata().getAnnotations() == null) {
            x.getMetadata().setAnnotations(new HashMap<>());
          }
          x.getMetadata().getAnnotations().put(EgressAnnotations.MANAGED_BY, w.ipam());
          return x;
        });
      } else if (!want && has && ourLabel) {
        client.nodes().withName(n.getMetadata().getName()).edit(x -> {
          // decided on a view: the node as read now must still carry our mark, or another IPAM's label stays
          Map<String, String> now = x.getMetadata().getAnnotations();
          if (now != null && w.ipam().equals(now.get(EgressAnnotations.MANAGED_BY))) {
            x.getMetadata().getLabels().remove(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
            now.remove(EgressAnnotations.MANAGED_BY);
          }
          return x;
        });
      }
    } catch (KubernetesClientException ex) {
      failures.add("Node " + n.getMetadata().getName() + ": " + ex.getMessage());
    }
  }

  /** The EgressIPAM an EgressIP is labelled with (null: none). */
  public static String ipamOf(GenericKubernetesResource e) {
    Map<String, String> labels = e.getMetadata().getLabels();
    return labels == null ? null : labels.get(EgressAnnotations.MANAGED_BY);
  }

  /**
   * What this writer reads of an EgressIP, and only that, as an informer keeps it: name, uid, resourceVersion,
   * our label, {@code spec.egressIPs} (not OVN's status, which changes with every failover). Nothing
   * trimmed is written back: an update is built from the decision, carrying only the resourceVersion.
   */
  public static GenericKubernetesResource trimmed(GenericKubernetesResource e) {
    GenericKubernetesResource out = new GenericKubernetesResource();
    out.setApiVersion(e.getApiVersion());
    out.setKind(e.getKind());
    io.fabric8.kubernetes.api.model.ObjectMeta meta = new io.fabric8.kubernetes.api.model.ObjectMeta();
    meta.setName(e.getMetadata().getName());
    meta.setResourceVersion(e.getMetadata().getResourceVersion());
    meta.setUid(e.getMetadata().getUid()); // a delete is conditioned on it
    String ipam = ipamOf(e);
    meta.setLabels(ipam == null ? null : Map.of(EgressAnnotations.MANAGED_BY, ipam));
    out.setMetadata(meta);
    Object ips = spec(e).get("egressIPs");
    out.setAdditionalProperty("spec", ips == null ? Map.of() : Map.of("egressIPs", ips));
    return out;
  }

  /** Whether an update changes what this writer reads (OVN's status updates do not). */
  public static boolean changed(GenericKubernetesResource now, GenericKubernetesResource before) {
    return !Objects.equals(ipamOf(now), ipamOf(before))
        || !Objects.equals(spec(now).get("egressIPs"), spec(before).get("egressIPs"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    Object s = r.getAdditionalProperties().get("spec");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }
}
