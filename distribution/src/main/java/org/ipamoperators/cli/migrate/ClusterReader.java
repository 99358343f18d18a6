package org.ipamoperators.cli.migrate;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ipamoperators.cli.migrate.Facts.Checked;
import org.ipamoperators.cli.migrate.Facts.Crd;
import org.ipamoperators.cli.migrate.Facts.Deployment;
import org.ipamoperators.cli.migrate.Facts.Found;
import org.ipamoperators.cli.migrate.Facts.Held;
import org.ipamoperators.cli.migrate.Facts.OurCrd;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.legacy.LegacyKinds;

/** Reads, and only reads, what each old operator left in the cluster. */
public final class ClusterReader {
  private static final ObjectMapper LENIENT = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  static final String KEEPALIVED_ANNOTATION = "keepalived-operator.redhat-cop.io/keepalivedgroup";

  private final KubernetesClient client;

  public ClusterReader(KubernetesClient client) {
    this.client = client;
  }

  public List<Found> read() {
    List<io.fabric8.kubernetes.api.model.apps.Deployment> deployments =
        client.apps().deployments().inAnyNamespace().list().getItems();
    List<Found> out = new ArrayList<>();
    for (OldOperator op : OldOperator.values()) {
      out.add(read(op, deployments));
    }
    return out;
  }

  private Found read(OldOperator op, List<io.fabric8.kubernetes.api.model.apps.Deployment> all) {
    List<Crd> crds = new ArrayList<>();
    List<OurCrd> ours = new ArrayList<>();
    Map<String, Integer> counts = new LinkedHashMap<>();
    List<Held> held = new ArrayList<>();
    List<Checked> checked = new ArrayList<>();
    List<String> groupImages = new ArrayList<>();
    for (OldOperator.Kind k : op.kinds()) {
      CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().withName(k.crd()).get();
      if (k.ourCrdFile() != null) {
        ours.add(ours(k));
      }
      if (crd == null) {
        continue;
      }
      if (!isOurs(crd, k)) {
        crds.add(crd(crd)); // ours already (the chart's or --install-crds'): nothing to hand over
      }
      List<GenericKubernetesResource> items = objects(k, crd);
      counts.put(k.kind(), items.size());
      for (GenericKubernetesResource r : items) {
        inspect(op, k, r, held, checked);
        if (k.kind().equals("KeepalivedGroup") && r.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec
            && spec.get("image") instanceof String image && !image.isBlank() && !groupImages.contains(image.trim())) {
          groupImages.add(image.trim());
        }
      }
    }
    if (op == OldOperator.EGRESSIP) {
      egressNamespaces(held);
    }
    List<Deployment> deployments = all.stream().filter(d -> op.runs(d.getMetadata().getName(), images(d)))
        .map(ClusterReader::deployment).toList();
    return new Found(op, crds, ours, deployments, counts, held, checked, groupImages);
  }

  private List<GenericKubernetesResource> objects(OldOperator.Kind k, CustomResourceDefinition crd) {
    // The stored version when served, else any served one: the apiserver converts.
    String version = crd.getSpec().getVersions().stream().filter(v -> Boolean.TRUE.equals(v.getServed()))
        .sorted((a, b) -> Boolean.compare(Boolean.TRUE.equals(b.getStorage()), Boolean.TRUE.equals(a.getStorage())))
        .map(CustomResourceDefinitionVersion::getName).findFirst().orElse(null);
    if (version == null) {
      return List.of(); // no version served: nothing can be read, nor adopted
    }
    ResourceDefinitionContext ctx = new ResourceDefinitionContext.Builder().withGroup(k.group()).withVersion(version)
        .withKind(k.kind()).withPlural(k.plural()).withNamespaced(k.namespaced()).build();
    return k.namespaced() ? client.genericKubernetesResources(ctx).inAnyNamespace().list().getItems()
        : client.genericKubernetesResources(ctx).list().getItems();
  }

  private static void inspect(OldOperator op, OldOperator.Kind k, GenericKubernetesResource r, List<Held> held,
      List<Checked> checked) {
    String ref = r.getMetadata().getNamespace() == null ? r.getMetadata().getName()
        : r.getMetadata().getNamespace() + "/" + r.getMetadata().getName();
    Object spec = r.getAdditionalProperties().get("spec");
    Map<?, ?> status = r.getAdditionalProperties().get("status") instanceof Map<?, ?> m ? m : Map.of();
    List<String> finalizers = r.getMetadata().getFinalizers() == null ? List.of() : r.getMetadata().getFinalizers();
    switch (k.kind()) {
      case "EgressIPAM" -> checked.add(new Checked(k.kind(), ref,
          ObjectChecks.egressIpam(spec == null ? null : LENIENT.convertValue(spec, EgressIPAMSpec.class))));
      case "IPGroup" -> checked.add(new Checked(k.kind(), ref,
          ObjectChecks.ipGroup(r.getMetadata().getName(), spec == null ? null : LENIENT.convertValue(spec, IPGroupSpec.class))));
      case "KeepalivedGroup" -> {
        Object ids = status.get("routerIDs");
        if (ids instanceof Map<?, ?> m && !m.isEmpty()) {
          held.add(new Held(k.kind(), ref, "router ids " + m + " kept"));
        }
      }
      case "IP" -> {
        String owner = annotation(r, LegacyKinds.OWNER_ANNOTATION);
        if (owner != null) { // without its Service the controller does not adopt it: counted only
          held.add(new Held(k.kind(), ref, "claimed for Service " + owner + " in IPGroup "
              + (r.getMetadata().getLabels() == null ? "?" : r.getMetadata().getLabels().getOrDefault(LegacyKinds.LABEL_IPGROUP, "?"))));
        }
      }
      case "VirtualIP" -> held.add(new Held(k.kind(), ref, "address " + Objects.requireNonNullElse(
          status.get("ip"), "(none yet)") + " claimed; migrate it with annotation " + LegacyKinds.MIGRATE_ANNOTATION));
      case "Eip" -> {
        if (status.get("allocationId") != null) {
          held.add(new Held(k.kind(), ref, "Elastic IP " + status.get("allocationId")
              + (status.get("publicIpAddress") == null ? "" : " (" + status.get("publicIpAddress") + ")")
              + " kept, found again by its UID tag" + (finalizers.isEmpty() ? "" : "; finalizers " + finalizers + " kept")));
        }
      }
      default -> { }
    }
  }

  private void egressNamespaces(List<Held> held) {
    for (var ns : client.namespaces().list().getItems()) {
      Map<String, String> a = ns.getMetadata().getAnnotations();
      if (a != null && a.get(EgressAnnotations.EGRESSIPS) != null && !a.get(EgressAnnotations.EGRESSIPS).isBlank()) {
        held.add(new Held("Namespace", ns.getMetadata().getName(), "egress IPs " + a.get(EgressAnnotations.EGRESSIPS)
            + " kept (EgressIPAM " + a.getOrDefault(EgressAnnotations.EGRESSIPAM, "?") + ")"));
      }
    }
  }

  private static String annotation(GenericKubernetesResource r, String key) {
    return r.getMetadata().getAnnotations() == null ? null : r.getMetadata().getAnnotations().get(key);
  }

  static Crd crd(CustomResourceDefinition crd) {
    List<String> served = crd.getSpec().getVersions().stream().filter(v -> Boolean.TRUE.equals(v.getServed()))
        .map(CustomResourceDefinitionVersion::getName).toList();
    List<String> stored = crd.getStatus() == null || crd.getStatus().getStoredVersions() == null ? List.of()
        : crd.getStatus().getStoredVersions();
    List<String> apply = new ArrayList<>();
    List<String> other = new ArrayList<>();
    for (ManagedFieldsEntry e : crd.getMetadata().getManagedFields()) {
      if (!ownsVersions(e)) {
        continue; // fields an apply of ours sets to the same value are shared, never a conflict
      }
      List<String> into = "Apply".equals(e.getOperation()) ? apply : other;
      if (!into.contains(e.getManager())) {
        into.add(e.getManager());
      }
    }
    return new Crd(crd.getMetadata().getName(), served, stored, apply, other);
  }

  /**
   * Whether a manager owns {@code spec.versions}: the one field (atomic) our CRD always sets to another value, so
   * the one a server-side apply of ours conflicts on. A forced apply takes it over; shared fields stay shared.
   */
  static boolean ownsVersions(ManagedFieldsEntry e) {
    if (e.getFieldsV1() == null || e.getFieldsV1().getAdditionalProperties() == null) {
      return false;
    }
    return e.getFieldsV1().getAdditionalProperties().get("f:spec") instanceof Map<?, ?> spec
        && spec.containsKey("f:versions");
  }

  static OurCrd ours(OldOperator.Kind k) {
    CustomResourceDefinition crd = ourCrd(k);
    return new OurCrd(k.crd(), k.ourCrdFile(), crd.getSpec().getVersions().stream()
        .filter(v -> Boolean.TRUE.equals(v.getServed())).map(CustomResourceDefinitionVersion::getName).toList());
  }

  private static CustomResourceDefinition ourCrd(OldOperator.Kind k) {
    try (InputStream in = ClusterReader.class.getClassLoader().getResourceAsStream("META-INF/fabric8/" + k.ourCrdFile())) {
      if (in == null) {
        throw new IllegalStateException("META-INF/fabric8/" + k.ourCrdFile() + " is not on the classpath");
      }
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Whether the cluster's CRD is the one we ship for this kind: the same group, kind and versions, each with the
   * same schema. Ours keep the old group and kind, so only the versions and schemas tell a cluster that already
   * switched from one that still runs the old operator's CRD.
   */
  static boolean isOurs(CustomResourceDefinition live, OldOperator.Kind k) {
    if (k.ourCrdFile() == null) {
      return false;
    }
    return versions(live).equals(versions(ourCrd(k)));
  }

  /** Each version's name, whether served and stored, and its schema, as comparable JSON. */
  private static Map<String, List<Object>> versions(CustomResourceDefinition crd) {
    Map<String, List<Object>> out = new java.util.TreeMap<>();
    for (CustomResourceDefinitionVersion v : crd.getSpec().getVersions()) {
      try {
        // JSON trees compare objects whatever the order of their keys (the apiserver sorts them)
        out.put(v.getName(), List.of(String.valueOf(v.getServed()), String.valueOf(v.getStorage()),
            LENIENT.readTree(Serialization.asJson(v.getSchema()))));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  private static List<String> images(io.fabric8.kubernetes.api.model.apps.Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream().map(Container::getImage)
        .filter(Objects::nonNull).toList();
  }

  private static Deployment deployment(io.fabric8.kubernetes.api.model.apps.Deployment d) {
    Map<String, String> env = new LinkedHashMap<>();
    for (Container c : d.getSpec().getTemplate().getSpec().getContainers()) {
      for (EnvVar v : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
        if (v.getValue() != null) {
          env.putIfAbsent(v.getName(), v.getValue());
        }
      }
    }
    int replicas = d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
    return new Deployment(d.getMetadata().getNamespace(), d.getMetadata().getName(), replicas, images(d), env);
  }
}
