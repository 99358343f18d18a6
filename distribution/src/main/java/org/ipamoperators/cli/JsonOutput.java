package org.ipamoperators.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code -o json} documents of the commands. Each starts with its {@code kind} and a
 * {@code schemaVersion}, so a script can tell which shape it reads: fields are only added within a
 * version; renaming or removing one, or changing its meaning, takes the next version.
 */
public final class JsonOutput {
  /** The shape of every {@code -o json} document this build writes. */
  public static final String SCHEMA_VERSION = "v1";

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private JsonOutput() {}

  /**
   * The document, indented.
   *
   * @param kind what the document is, e.g. {@code PlanReport}
   * @param body its fields, in their order
   * @return the JSON text
   */
  public static String document(String kind, Map<String, ?> body) throws JsonProcessingException {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("kind", kind);
    doc.put("schemaVersion", SCHEMA_VERSION);
    doc.putAll(body);
    return JSON.writeValueAsString(doc);
  }
}
