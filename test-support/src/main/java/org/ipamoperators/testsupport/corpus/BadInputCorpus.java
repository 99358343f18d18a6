package org.ipamoperators.testsupport.corpus;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads a bad-input corpus: the multi-document YAML files of a classpath directory (usually
 * {@code bad-input/}), in file-name order. Each document is one object, preceded by comment lines:
 * <ul>
 *   <li>{@code # wrong: <what is wrong>} and {@code # expect: key=value ...}: a bad case, the object at fault;</li>
 *   <li>{@code # good: <what must be served>}: a good object applied beside the bad ones;</li>
 *   <li>neither: a supporting object (a node, an IPAM) that the cases need, applied first.</li>
 * </ul>
 * {@code ${repeat:TEXT:N}} in a document is replaced by TEXT repeated N times, so a huge object stays a
 * small file. The reader knows no case: tests assert what {@code expect} says.
 */
public final class BadInputCorpus {
  private static final Pattern REPEAT = Pattern.compile("\\$\\{repeat:([^:}]*):(\\d+)}");
  private static final Pattern COMMENT = Pattern.compile("^#\\s*(wrong|expect|good):\\s*(.*)$");

  private BadInputCorpus() {}

  /** One document of the corpus. {@code expect} maps keys (event, condition, ...) to values. */
  public record Entry(String file, int index, Role role, String description, Map<String, String> expect,
      String yaml) {
    /** The object as the API server takes it (kind and apiVersion as written). */
    public GenericKubernetesResource object() {
      return Serialization.unmarshal(yaml, GenericKubernetesResource.class);
    }

    public String name() {
      return object().getMetadata().getName();
    }

    public String kind() {
      return object().getKind();
    }

    /** The expected value for {@code key}, or null when the case does not name one. */
    public String expect(String key) {
      return expect.get(key);
    }

    @Override
    public String toString() {
      return file + "#" + index + " " + kind() + "/" + name() + ": " + description;
    }
  }

  public enum Role { BAD, GOOD, SUPPORT }

  /** Every document of every {@code *.yaml} file under the classpath directory {@code dir}. */
  public static List<Entry> load(String dir) {
    URL url = Thread.currentThread().getContextClassLoader().getResource(dir);
    if (url == null) {
      throw new IllegalArgumentException("no corpus directory " + dir + " on the classpath");
    }
    try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
      List<Entry> out = new ArrayList<>();
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        out.addAll(parse(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8)));
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** The documents of one file's text. */
  public static List<Entry> parse(String file, String text) {
    List<Entry> out = new ArrayList<>();
    int index = 0;
    for (String doc : text.split("(?m)^---\\s*$")) {
      Role role = Role.SUPPORT;
      String description = null;
      Map<String, String> expect = new LinkedHashMap<>();
      boolean content = false;
      for (String line : doc.split("\n")) {
        Matcher m = COMMENT.matcher(line.trim());
        if (m.matches()) {
          switch (m.group(1)) {
            case "wrong" -> {
              role = Role.BAD;
              description = m.group(2).trim();
            }
            case "good" -> {
              role = Role.GOOD;
              description = m.group(2).trim();
            }
            default -> {
              for (String token : m.group(2).trim().split("\\s+")) {
                int eq = token.indexOf('=');
                if (eq <= 0) {
                  throw new IllegalArgumentException(file + "#" + index + ": expect token '" + token
                      + "' is not key=value");
                }
                expect.put(token.substring(0, eq), token.substring(eq + 1));
              }
            }
          }
        } else if (!line.isBlank() && !line.trim().startsWith("#")) {
          content = true;
        }
      }
      if (!content) {
        continue;
      }
      if (role == Role.BAD && expect.isEmpty()) {
        throw new IllegalArgumentException(file + "#" + index + ": a '# wrong:' case needs an '# expect:' line");
      }
      out.add(new Entry(file, index++, role, description == null ? "" : description, Map.copyOf(expect),
          expand(doc)));
    }
    return out;
  }

  private static String expand(String doc) {
    Matcher m = REPEAT.matcher(doc);
    StringBuilder b = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(b, Matcher.quoteReplacement(m.group(1).repeat(Integer.parseInt(m.group(2)))));
    }
    m.appendTail(b);
    return b.toString();
  }
}
