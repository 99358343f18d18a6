package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The Kubernetes manifests as the build assembles them under {@code target/kubernetes/<controller>/}. */
final class Manifests {
  static final Path ROOT = Path.of("target", "kubernetes");
  static final String NAMESPACE = "ipam-operators";

  record Item(Path file, HasMetadata object) {}

  private Manifests() {
  }

  static Path dir(String controller) {
    return ROOT.resolve(controller);
  }

  static List<Path> files(String controller) {
    try (Stream<Path> s = Files.walk(dir(controller))) {
      return s.filter(Files::isRegularFile)
          .filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
          .sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("no manifests under " + dir(controller) + ": run the build (process-classes)", e);
    }
  }

  static List<Item> load(String controller) {
    KubernetesSerialization serialization = new KubernetesSerialization();
    List<Item> out = new ArrayList<>();
    for (Path f : files(controller)) {
      try (InputStream in = Files.newInputStream(f)) {
        Object parsed = serialization.unmarshal(in);
        if (parsed instanceof List<?> list) {
          for (Object o : list) {
            out.add(new Item(f, (HasMetadata) o));
          }
        } else {
          out.add(new Item(f, (HasMetadata) parsed));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  static List<HasMetadata> objects(String controller) {
    return load(controller).stream().map(Item::object).toList();
  }

  static <T extends HasMetadata> List<T> ofType(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> all = ofType(objects, type);
    if (all.size() != 1) {
      throw new AssertionError("expected one " + type.getSimpleName() + ", found " + all.size());
    }
    return all.get(0);
  }

  static HasMetadata byKind(List<HasMetadata> objects, String kind) {
    return objects.stream().filter(o -> kind.equals(o.getKind())).findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " in the manifests"));
  }

  /** The operator container's arguments. */
  static List<String> operatorArgs(Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
  }

  /** The value of {@code --name=value} among the Deployment's arguments. */
  static String arg(Deployment d, String name) {
    return operatorArgs(d).stream().filter(a -> a.startsWith(name + "=")).map(a -> a.substring(name.length() + 1))
        .findFirst().orElseThrow(() -> new AssertionError("the Deployment does not pass " + name));
  }
}
