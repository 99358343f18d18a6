package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/** An answer: status, body (null: none), extra headers. */
record Answer(int status, JsonNode body, Map<String, String> headers) {
  static Answer ok(JsonNode body) {
    return new Answer(200, body, Map.of());
  }
}
