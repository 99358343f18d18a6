package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Who may call: the token endpoints (Microsoft Entra's and the managed identity's) issue tokens of a
 * kind each, so tests see which credential acted; ARM requests need a bearer token, and one of a
 * denied kind gets 403. Its data is guarded by the state's monitor, which it takes itself.
 */
final class ArmAccess {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private final Object lock;
  private final Map<String, String> tokenKinds = new LinkedHashMap<>(); // token -> kind
  private final Set<String> deniedKinds = new HashSet<>();

  ArmAccess(Object lock) {
    this.lock = lock;
  }

  void deny(List<String> kinds) {
    synchronized (lock) {
      deniedKinds.clear();
      deniedKinds.addAll(kinds);
    }
  }

  Optional<String> kindOf(String token) {
    synchronized (lock) {
      return Optional.ofNullable(tokenKinds.get(token));
    }
  }

  /** A bearer token is required; one of a denied kind gets 403. */
  void authenticate(String method, String rawPath, Map<String, String> headers) {
    String auth = headers.get("authorization");
    if (auth == null || !auth.startsWith("Bearer ") || auth.length() <= 7) {
      throw new ArmError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.");
    }
    synchronized (lock) {
      String kind = tokenKinds.get(auth.substring(7));
      if (kind != null && deniedKinds.contains(kind)) {
        throw new ArmError(403, "AuthorizationFailed", "The client with a " + kind + " token does not have "
            + "authorization to perform action '" + method + "' over scope '" + rawPath + "' or the scope is invalid.");
      }
    }
  }

  /**
   * Microsoft Entra's token endpoint ({@code POST /{tenant}/oauth2/v2.0/token}: a client secret or a
   * federated client assertion) and the instance metadata service's managed-identity token
   * ({@code GET /metadata/identity/oauth2/token} with {@code Metadata: true}), each issuing tokens of
   * its own kind; empty for any other request.
   */
  Optional<Answer> tokenEndpoint(String method, String rawPath, Map<String, String> headers, String body) {
    String low = rawPath.toLowerCase(Locale.ROOT);
    String kind;
    if ("POST".equals(method) && low.matches("^/[^/]+/oauth2/v2\\.0/token$")) {
      Map<String, String> form = ArmExchange.query(body);
      kind = form.containsKey("client_secret") ? ArmServer.CLIENT_SECRET
          : form.containsKey("client_assertion") ? ArmServer.WORKLOAD_IDENTITY : null;
      if (kind == null || form.getOrDefault("client_id", "").isBlank()) {
        return Optional.of(new Answer(400, F.objectNode().put("error", "invalid_request")
            .put("error_description", "no client credential"), Map.of()));
      }
    } else if ("GET".equals(method) && low.equals("/metadata/identity/oauth2/token")) {
      if (!"true".equalsIgnoreCase(headers.get("metadata"))) {
        return Optional.of(new Answer(400, F.objectNode().put("error", "invalid_request"), Map.of()));
      }
      kind = ArmServer.MANAGED_IDENTITY;
    } else {
      return Optional.empty();
    }
    return Optional.of(Answer.ok(issue(kind)));
  }

  private ObjectNode issue(String kind) {
    String token;
    synchronized (lock) {
      token = kind + "-" + (tokenKinds.size() + 1) + "-" + UUID.randomUUID();
      tokenKinds.put(token, kind);
    }
    ObjectNode out = F.objectNode().put("token_type", "Bearer").put("access_token", token);
    if (ArmServer.MANAGED_IDENTITY.equals(kind)) {
      out.put("expires_in", "3599").put("expires_on", String.valueOf(Instant.now().getEpochSecond() + 3599))
          .put("resource", "https://management.core.windows.net/");
    } else {
      out.put("expires_in", 3599).put("ext_expires_in", 3599);
    }
    return out;
  }
}
