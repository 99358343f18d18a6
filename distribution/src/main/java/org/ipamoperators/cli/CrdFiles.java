package org.ipamoperators.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.ipamoperators.cli.OperatorControllers.Controller;
import org.ipamoperators.cli.OperatorControllers.RequiredCrd;

/**
 * Copies each controller's generated CRDs, byte for byte, from the classpath into
 * {@code DIR/<controller>/crds/}. The build runs it so that the Kubernetes manifests ship the CRDs
 * the controllers were built with; nobody edits a CRD by hand.
 */
public final class CrdFiles {

  private CrdFiles() {
  }

  public static void main(String[] args) {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: CrdFiles OUTPUT_DIR");
    }
    write(Path.of(args[0]));
  }

  static void write(Path dir) {
    for (String name : OperatorControllers.names()) {
      Controller c = OperatorControllers.byName(name).orElseThrow();
      for (RequiredCrd crd : c.crds()) {
        Path target = dir.resolve(c.name()).resolve("crds").resolve(fileName(crd));
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
    }
  }

  static String fileName(RequiredCrd crd) {
    return crd.resource().substring(crd.resource().lastIndexOf('/') + 1);
  }
}
