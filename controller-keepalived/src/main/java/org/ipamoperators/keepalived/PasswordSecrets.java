package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingConfigurationBuilder;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingEventSource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;

/**
 * The password Secret a group names. The operator may neither list nor watch Secrets, so each group's Secret is
 * read by name every {@code poll} by an event source (no other Secret ever reaches its memory), and a reconcile
 * takes the password from that copy.
 */
final class PasswordSecrets {
  /** On the stand-in for a Secret that could not be read: {@code absent}, or {@code unreadable <code>}. */
  static final String ABSENT = "ipam.ipamoperators.org/absent";
  private static final String FORBIDDEN = "unreadable 403";

  /** The password, or why there is none; both empty for a group without passwordAuth. */
  record Password(Optional<String> value, Optional<String> problem) {}

  private final KubernetesClient client;
  private PerResourcePollingEventSource<Secret, KeepalivedGroup, String> source;

  PasswordSecrets(KubernetesClient client) {
    this.client = client;
  }

  PerResourcePollingEventSource<Secret, KeepalivedGroup, String> eventSource(
      EventSourceContext<KeepalivedGroup> context, Duration poll) {
    source = new PerResourcePollingEventSource<>(Secret.class, context,
        new PerResourcePollingConfigurationBuilder<Secret, KeepalivedGroup, String>(this::poll, poll)
            .withName("password-secrets")
            .withRegisterPredicate(g -> secretName(g) != null)
            .withResourceIDMapper(s -> s.getMetadata().getName()).build());
    return source;
  }

  /**
   * Always one entry: a Secret that goes away must change the event source's cache (an empty result does not
   * reliably), so its absence is a stand-in of the same name; an unreadable one too (the reconcile says why).
   */
  private Set<Secret> poll(KeepalivedGroup g) {
    try {
      return Set.of(read(g).orElseGet(() -> standIn(g, "absent")));
    } catch (KubernetesClientException e) {
      return Set.of(standIn(g, "unreadable " + e.getCode()));
    }
  }

  /** The password of a group with passwordAuth, from the event source's copy of its Secret. */
  Password password(KeepalivedGroup group) {
    KeepalivedGroupSpec spec = group.getSpec();
    if (spec == null || spec.passwordAuth() == null) {
      return new Password(Optional.empty(), Optional.empty());
    }
    String name = secretName(group);
    Secret secret = current(group, name);
    String why = standInReason(secret);
    if (FORBIDDEN.equals(why)) {
      return problem("Secret " + name + " of passwordAuth cannot be read (403): the operator reads Secrets only in"
          + " the namespaces it watches");
    }
    if (why != null) {
      return problem("Secret " + name + " of passwordAuth does not exist");
    }
    String key = spec.passwordAuth().keyOrDefault();
    Optional<String> value = value(secret, key);
    return value.isPresent() ? new Password(value, Optional.empty())
        : problem("Secret " + name + " has no key '" + key + "'");
  }

  /**
   * The copy of the Secret the spec names. Read by name instead when the copy is of another Secret (the spec has
   * just named a new one) or the last poll failed for a reason other than 403: that read throws, and the reconcile
   * is retried.
   */
  private Secret current(KeepalivedGroup group, String name) {
    Optional<Secret> copy = source.getSecondaryResources(group).stream()
        .filter(s -> name != null && name.equals(s.getMetadata().getName())).findFirst();
    String why = copy.map(PasswordSecrets::standInReason).orElse(null);
    if (copy.isPresent() && (why == null || "absent".equals(why) || FORBIDDEN.equals(why))) {
      return copy.get();
    }
    try {
      return read(group).orElseGet(() -> standIn(group, "absent"));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e; // transient: retried
      }
      return standIn(group, FORBIDDEN);
    }
  }

  private Optional<Secret> read(KeepalivedGroup g) {
    String name = secretName(g);
    return name == null ? Optional.empty()
        : Optional.ofNullable(client.secrets().inNamespace(g.getMetadata().getNamespace()).withName(name).get());
  }

  static String secretName(KeepalivedGroup g) {
    return g.getSpec() == null || g.getSpec().passwordAuth() == null || g.getSpec().passwordAuth().secretRef() == null
        ? null : g.getSpec().passwordAuth().secretRef().name();
  }

  private static Password problem(String message) {
    return new Password(Optional.empty(), Optional.of(message));
  }

  private static Secret standIn(KeepalivedGroup g, String why) {
    return new SecretBuilder().withNewMetadata().withName(secretName(g))
        .withNamespace(g.getMetadata().getNamespace()).withAnnotations(Map.of(ABSENT, why)).endMetadata().build();
  }

  /** Why a Secret is a stand-in, or null for a Secret read from the API server (it has a uid). */
  private static String standInReason(Secret s) {
    if (s.getMetadata().getUid() != null || s.getMetadata().getAnnotations() == null) {
      return null;
    }
    return s.getMetadata().getAnnotations().get(ABSENT);
  }

  private static Optional<String> value(Secret secret, String key) {
    if (secret.getData() != null && secret.getData().get(key) != null) {
      return Optional.of(new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8));
    }
    if (secret.getStringData() != null && secret.getStringData().get(key) != null) {
      return Optional.of(secret.getStringData().get(key));
    }
    return Optional.empty();
  }
}
