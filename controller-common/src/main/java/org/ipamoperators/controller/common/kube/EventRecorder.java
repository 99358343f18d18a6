package org.ipamoperators.controller.common.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records core/v1 Events on the object at fault, aggregating repeats the way kubectl shows them
 * (one Event per object, reason and message, with a count), so a problem re-reported on every
 * reconcile does not flood the API server. Failures to record are logged, never thrown: an Event
 * is a courtesy, not part of the work.
 */
public final class EventRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final java.time.Duration REPEAT_AFTER = java.time.Duration.ofMinutes(10);
  private final KubernetesClient client;
  private final String component;
  // The same problem re-found by every reconcile is recorded again only after a while (memory
  // only: after a restart a repeat is recorded once more, which is harmless).
  private final java.util.Map<String, Instant> recent = new java.util.concurrent.ConcurrentHashMap<>();

  public EventRecorder(KubernetesClient client, String component) {
    this.client = client;
    this.component = component;
  }

  public void warning(HasMetadata on, String reason, String message) {
    record(on, "Warning", reason, message);
  }

  public void normal(HasMetadata on, String reason, String message) {
    record(on, "Normal", reason, message);
  }

  private void record(HasMetadata on, String type, String reason, String message) {
    String kind = on.getKind() != null ? on.getKind() : HasMetadata.getKind(on.getClass());
    String apiVersion = on.getApiVersion() != null ? on.getApiVersion() : HasMetadata.getApiVersion(on.getClass());
    String ns = on.getMetadata().getNamespace() == null ? "default" : on.getMetadata().getNamespace();
    if ("Namespace".equals(kind)) {
      ns = on.getMetadata().getName(); // events about a namespace live in it, as kubectl describe expects
    }
    String name = on.getMetadata().getName() + "." + hash(kind + reason + message);
    Instant at = Instant.now();
    Instant last = recent.get(ns + "/" + name);
    if (last != null && last.plus(REPEAT_AFTER).isAfter(at)) {
      return;
    }
    if (recent.size() > 100_000) {
      recent.clear();
    }
    recent.put(ns + "/" + name, at);
    String now = at.toString();
    try {
      Event existing = client.v1().events().inNamespace(ns).withName(name).get();
      if (existing != null) {
        existing.setCount(existing.getCount() == null ? 2 : existing.getCount() + 1);
        existing.setLastTimestamp(now);
        client.v1().events().inNamespace(ns).resource(existing).update();
        return;
      }
      ObjectReference ref = new ObjectReferenceBuilder().withApiVersion(apiVersion)
          .withKind(kind).withName(on.getMetadata().getName())
          .withNamespace("Namespace".equals(kind) ? ns : on.getMetadata().getNamespace())
          .withUid(on.getMetadata().getUid()).build();
      client.v1().events().inNamespace(ns).resource(new EventBuilder().withNewMetadata().withName(name)
          .withNamespace(ns).endMetadata().withInvolvedObject(ref).withType(type).withReason(reason)
          .withMessage(message.length() > 1000 ? message.substring(0, 1000) : message)
          .withCount(1).withFirstTimestamp(now).withLastTimestamp(now)
          .withNewSource().withComponent(component).endSource().build()).create();
    } catch (KubernetesClientException e) {
      LOG.warn("could not record event {} on {} {}: {}", reason, kind, on.getMetadata().getName(),
          e.getMessage());
    }
  }

  private static String hash(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(s.getBytes(StandardCharsets.UTF_8)), 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
