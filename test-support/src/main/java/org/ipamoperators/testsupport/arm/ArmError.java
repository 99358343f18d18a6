package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/** An ARM error answer thrown from anywhere in the handling: status, code, message, detail code, Retry-After. */
final class ArmError extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final int status;
  final String code;
  final String detailCode;
  final Integer retryAfter;

  ArmError(int status, String code, String message) {
    this(status, code, message, null, null);
  }

  ArmError(int status, String code, String message, String detailCode, Integer retryAfter) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.detailCode = detailCode;
    this.retryAfter = retryAfter;
  }

  static ArmError notFound(String type, String name, String rg) {
    return new ArmError(404, "ResourceNotFound", "The Resource '" + type + "/" + name + "' under resource group '"
        + rg + "' was not found.");
  }

  /** The same error with other prose (see {@link ArmServer#reword}). */
  ArmError reworded(String message) {
    return new ArmError(status, code, message, detailCode, retryAfter);
  }

  Answer answer() {
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    ObjectNode err = body.putObject("error").put("code", code).put("message", getMessage());
    ArrayNode details = err.putArray("details");
    if (detailCode != null) {
      details.addObject().put("code", detailCode).put("message", getMessage());
    }
    Map<String, String> h = retryAfter == null ? Map.of() : Map.of("Retry-After", String.valueOf(retryAfter));
    return new Answer(status, body, h);
  }
}
