package org.ipamoperators.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.ipamoperators.cli.operator.OperatorControllers.Controller;
import org.ipamoperators.cli.operator.OperatorControllers.RequiredCrd;
import org.ipamoperators.cli.operator.OperatorControllers;

/**
 * Copies each controller's generated CRDs, byte for byte, from the classpath into
 * {@code DIR/<controller>/crds/} and, every CRD once, into the Helm chart's {@code crds/}. The build
 * runs it so that the manifests and the chart ship the CRDs the controllers were built with; nobody
 * edits a CRD by hand.
 */
public final class CrdFiles {

  private CrdFiles() {
  }

  public static void main(String[] args) {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: CrdFiles MANIFESTS_DIR CHART_CRDS_DIR");
    }
    write(Path.of(args[0]), Path.of(args[1]));
  }

  static void write(Path manifests, Path chartCrds) {
    List<Controller> all = OperatorControllers.names().stream()
        .map(name -> OperatorControllers.byName(name).orElseThrow()).toList();
    for (Controller c : all) {
      for (RequiredCrd crd : c.crds()) {
        copy(crd, manifests.resolve(c.name()).resolve("crds"));
      }
    }
    for (RequiredCrd crd : OperatorControllers.crds(all)) {
      copy(crd, chartCrds);
    }
  }

  private static void copy(RequiredCrd crd, Path dir) {
    Path target = dir.resolve(fileName(crd));
    try (InputStream in = CrdFiles.class.getClassLoader().getResourceAsStream(crd.resource())) {
      if (in == null) {
        throw new IllegalStateException(crd.resource() + " is not on the classpath: build the controller modules first");
      }
      Files.createDirectories(target.getParent());
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + target, e);
    }
  }

  static String fileName(RequiredCrd crd) {
    return crd.resource().substring(crd.resource().lastIndexOf('/') + 1);
  }
}
