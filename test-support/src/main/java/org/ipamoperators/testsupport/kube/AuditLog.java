package org.ipamoperators.testsupport.kube;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The audit log of an apiserver that {@link KubeApiServer#sharedAudited()} starts: its flags, and reading it. */
final class AuditLog {
  /** Every request at the Metadata level (who, what, on which object, the response code; no bodies). */
  private static final String POLICY = """
      apiVersion: audit.k8s.io/v1
      kind: Policy
      omitStages: [RequestReceived]
      rules:
        - level: Metadata
      """;

  private AuditLog() {}

  static Path file(Path workDir) {
    return workDir.resolve("audit.log");
  }

  /** Writes the policy into {@code workDir} and returns the apiserver flags that log to {@link #file}. */
  static Map<String, String> configure(Path workDir) {
    Path policy = workDir.resolve("audit-policy.yaml");
    try {
      Files.writeString(policy, POLICY, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the audit policy", e);
    }
    Map<String, String> flags = new LinkedHashMap<>();
    flags.put("--audit-policy-file", policy.toString());
    flags.put("--audit-log-path", file(workDir).toString());
    flags.put("--audit-log-format", "json");
    // One file for the JVM's life: no rotation under a reader's offset.
    flags.put("--audit-log-maxsize", "0");
    return flags;
  }

  static long size(Path log) {
    try {
      return Files.exists(log) ? Files.size(log) : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Complete lines after {@code offset}; a request logged in several stages appears once, as its last stage. */
  static List<AuditEvent> read(Path log, long offset) {
    KubernetesSerialization json = new KubernetesSerialization();
    Map<String, AuditEvent> byId = new LinkedHashMap<>();
    for (String line : lines(log, offset)) {
      @SuppressWarnings("unchecked")
      Map<String, Object> event = json.unmarshal(line, Map.class);
      AuditEvent e = parse(event);
      byId.remove(e.auditId());
      byId.put(e.auditId(), e);
    }
    return new ArrayList<>(byId.values());
  }

  private static List<String> lines(Path log, long offset) {
    if (!Files.exists(log)) {
      return List.of();
    }
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      long start = offset;
      if (offset > 0) {
        // A mark taken while a line was being written: that line belongs before the mark.
        f.seek(offset - 1);
        while (start < f.length() && f.read() != '\n') {
          start++;
        }
      }
      byte[] bytes = new byte[(int) Math.max(0, f.length() - start)];
      f.seek(start);
      f.readFully(bytes);
      String text = new String(bytes, StandardCharsets.UTF_8);
      // A line still being written has no newline yet: leave it for the next read.
      int end = text.lastIndexOf('\n');
      return end < 0 ? List.of() : text.substring(0, end).lines().filter(l -> !l.isBlank()).toList();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the audit log " + log, e);
    }
  }

  @SuppressWarnings("unchecked")
  private static AuditEvent parse(Map<String, Object> event) {
    Map<String, Object> user = (Map<String, Object>) event.getOrDefault("user", Map.of());
    Map<String, Object> ref = (Map<String, Object>) event.get("objectRef");
    Map<String, Object> status = (Map<String, Object>) event.getOrDefault("responseStatus", Map.of());
    Object code = status.get("code");
    return new AuditEvent((String) event.get("auditID"), (String) user.get("username"), (String) event.get("verb"),
        ref == null ? null : (String) ref.getOrDefault("apiGroup", ""),
        ref == null ? null : (String) ref.get("resource"),
        ref == null ? null : (String) ref.get("subresource"),
        ref == null ? null : (String) ref.get("namespace"),
        ref == null ? null : (String) ref.get("name"),
        code instanceof Number n ? n.intValue() : 0);
  }
}
