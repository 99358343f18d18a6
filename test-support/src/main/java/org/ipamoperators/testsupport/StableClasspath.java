package org.ipamoperators.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The benchmark's class path as jars only, at paths, sizes and modification times that stay the same from run to
 * run while the classes do: a class-data-sharing archive (AppCDS, an AOT cache) accepts neither a non-empty
 * directory on the class path nor a jar that changed since the archive was written, and Maven rewrites the
 * reactor's jars on every build. Each entry is copied (a jar) or packed (a directory) into {@code dir} under a name
 * made from its content's hash, with entry times and the file time fixed.
 */
public final class StableClasspath {
  private static final FileTime FIXED = FileTime.fromMillis(315_532_800_000L);

  private StableClasspath() {
  }

  /** The class path {@code classpath} as stable jars in {@code dir}, joined as a class path. */
  public static String of(String classpath, Path dir) throws IOException {
    Files.createDirectories(dir);
    List<String> stable = new ArrayList<>();
    for (String entry : classpath.split(File.pathSeparator)) {
      Path path = Path.of(entry);
      if (Files.isDirectory(path)) {
        stable.add(place(packed(path), path.getParent().getParent().getFileName() + "-" + path.getFileName(), dir));
      } else if (Files.isRegularFile(path)) {
        // A jar the build just made carries the build's time in every entry: packed again, its name stays.
        byte[] jar = path.toAbsolutePath().toString().contains("/target/") ? repacked(path) : Files.readAllBytes(path);
        stable.add(place(jar, path.getFileName().toString().replace(".jar", ""), dir));
      }
    }
    return String.join(File.pathSeparator, stable);
  }

  private static String place(byte[] jar, String name, Path dir) throws IOException {
    Path target = dir.resolve(name + "-" + hash(jar) + ".jar");
    if (!Files.exists(target)) {
      Path partial = Files.createTempFile(dir, name, ".part");
      Files.write(partial, jar);
      Files.move(partial, target);
    }
    Files.setLastModifiedTime(target, FIXED);
    return target.toString();
  }

  private static byte[] packed(Path root) throws IOException {
    var bytes = new ByteArrayOutputStream();
    try (JarOutputStream jar = new JarOutputStream(bytes); Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
        JarEntry entry = new JarEntry(root.relativize(file).toString().replace('\\', '/'));
        entry.setLastModifiedTime(FIXED);
        jar.putNextEntry(entry);
        Files.copy(file, (OutputStream) jar);
        jar.closeEntry();
      }
    }
    return bytes.toByteArray();
  }

  private static byte[] repacked(Path source) throws IOException {
    var bytes = new ByteArrayOutputStream();
    try (ZipFile zip = new ZipFile(source.toFile());
        JarOutputStream jar = new JarOutputStream(bytes)) {
      List<? extends ZipEntry> entries = zip.stream().filter(e -> !e.isDirectory())
          .sorted(Comparator.comparing(ZipEntry::getName)).toList();
      for (ZipEntry original : entries) {
        JarEntry entry = new JarEntry(original.getName());
        entry.setLastModifiedTime(FIXED);
        jar.putNextEntry(entry);
        zip.getInputStream(original).transferTo(jar);
        jar.closeEntry();
      }
    }
    return bytes.toByteArray();
  }

  private static String hash(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content), 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
