package org.ipamoperators.testsupport.crds;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Installs CustomResourceDefinitions from classpath YAML and waits until the apiserver serves them.
 *
 * <p>Installation is a forced server-side apply, so it creates or updates; applying an unchanged CRD changes
 * nothing on the server, and the waits then return at once. Nothing is remembered between calls: the server is
 * the record of what is installed.
 */
public final class CrdInstaller {

  /** How long {@link #install} waits for a CRD to become Established and served. */
  public static final Duration ESTABLISH_TIMEOUT = Duration.ofSeconds(60);

  private static final String FIELD_MANAGER = "ipam-test-support";
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private CrdInstaller() {
  }

  /** Parses the CRDs in the given classpath resources (one or more YAML documents each). */
  public static List<CustomResourceDefinition> load(String... classpathResources) {
    List<CustomResourceDefinition> crds = new ArrayList<>();
    for (String resource : classpathResources) {
      crds.addAll(parse(resource));
    }
    return crds;
  }

  /** Installs the CRDs in the given classpath resources and waits until each is Established and served. */
  public static List<CustomResourceDefinition> install(KubernetesClient client, String... classpathResources) {
    List<CustomResourceDefinition> crds = load(classpathResources);
    install(client, crds);
    return crds;
  }

  /** Installs these CRDs and waits until each is Established and served. */
  public static void install(KubernetesClient client, Collection<CustomResourceDefinition> crds) {
    for (CustomResourceDefinition crd : crds) {
      CustomResourceDefinition copy = SERIALIZATION.clone(crd);
      copy.getMetadata().setResourceVersion(null);
      client.apiextensions().v1().customResourceDefinitions().resource(copy)
          .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
    }
    for (CustomResourceDefinition crd : crds) {
      awaitEstablished(client, crd.getMetadata().getName(), ESTABLISH_TIMEOUT);
      awaitServed(client, crd, ESTABLISH_TIMEOUT);
    }
  }

  /**
   * Waits until the named CRD reports Established=True. Fails at once, with the apiserver's message, if its
   * names are rejected (NamesAccepted=False).
   */
  public static CustomResourceDefinition awaitEstablished(KubernetesClient client, String crdName, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      CustomResourceDefinition current = client.apiextensions().v1().customResourceDefinitions().withName(crdName).get();
      if (current != null && current.getStatus() != null) {
        if (condition(current, "NamesAccepted").filter(c -> "False".equals(c.getStatus())).isPresent()) {
          throw new IllegalStateException("CRD " + crdName + " names not accepted: "
              + condition(current, "NamesAccepted").map(CustomResourceDefinitionCondition::getMessage).orElse(""));
        }
        if (condition(current, "Established").filter(c -> "True".equals(c.getStatus())).isPresent()) {
          return current;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("CRD " + crdName + " not Established within " + timeout + "; status: "
            + (current == null ? "missing" : SERIALIZATION.asJson(current.getStatus())));
      }
      sleep(50);
    }
  }

  /** The REST endpoint of a new CRD can lag its Established condition by a moment; list until it answers. */
  private static void awaitServed(KubernetesClient client, CustomResourceDefinition crd, Duration timeout) {
    ResourceDefinitionContext context = context(crd);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        client.genericKubernetesResources(context).inAnyNamespace()
            .list(new io.fabric8.kubernetes.api.model.ListOptionsBuilder().withLimit(1L).build());
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404 || System.nanoTime() > deadline) {
          throw e;
        }
      }
      sleep(50);
    }
  }

  /** The storage version of a CRD as a client context. */
  public static ResourceDefinitionContext context(CustomResourceDefinition crd) {
    String version = crd.getSpec().getVersions().stream()
        .filter(CustomResourceDefinitionVersion::getStorage)
        .map(CustomResourceDefinitionVersion::getName)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException(crd.getMetadata().getName() + " has no storage version"));
    return new ResourceDefinitionContext.Builder()
        .withGroup(crd.getSpec().getGroup())
        .withVersion(version)
        .withKind(crd.getSpec().getNames().getKind())
        .withPlural(crd.getSpec().getNames().getPlural())
        .withNamespaced("Namespaced".equals(crd.getSpec().getScope()))
        .build();
  }

  private static Optional<CustomResourceDefinitionCondition> condition(CustomResourceDefinition crd, String type) {
    return Optional.ofNullable(crd.getStatus().getConditions()).orElse(List.of()).stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst();
  }

  private static List<CustomResourceDefinition> parse(String resource) {
    ClassLoader loader = Optional.ofNullable(Thread.currentThread().getContextClassLoader())
        .orElse(CrdInstaller.class.getClassLoader());
    String path = resource.startsWith("/") ? resource.substring(1) : resource;
    try (InputStream in = loader.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalArgumentException("No classpath resource " + path);
      }
      Object parsed = SERIALIZATION.unmarshal(in);
      List<?> items;
      if (parsed instanceof KubernetesList list) {
        items = list.getItems();
      } else if (parsed instanceof List<?> list) {
        items = list;
      } else {
        items = List.of(Objects.requireNonNull(parsed, () -> "Empty resource " + path));
      }
      List<CustomResourceDefinition> crds = new ArrayList<>();
      for (Object item : items) {
        if (!(item instanceof CustomResourceDefinition crd)) {
          throw new IllegalArgumentException(path + " holds a " + item.getClass().getSimpleName()
              + ", not an apiextensions.k8s.io/v1 CustomResourceDefinition");
        }
        crds.add(crd);
      }
      return crds;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + path, e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for a CRD", e);
    }
  }
}
