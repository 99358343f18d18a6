package org.ipamoperators.testsupport.arm;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Routes a request as ARM does: token endpoints first, then authentication, injected faults and
 * throttling, subscription and api-version, and finally the resource type under {@code providers}.
 */
final class ArmRouter {
  private final ArmState state;
  private final ArmAccess access;
  private final FaultsAndThrottling limits;
  private final ResourceRoutes resources;
  private final AsyncOperations operations;

  ArmRouter(ArmState state, ArmAccess access, FaultsAndThrottling limits, ResourceRoutes resources,
      AsyncOperations operations) {
    this.state = state;
    this.access = access;
    this.limits = limits;
    this.resources = resources;
    this.operations = operations;
  }

  Answer dispatch(String method, String rawPath, Map<String, String> q, Map<String, String> headers, String body) {
    Optional<Answer> token = access.tokenEndpoint(method, rawPath, headers, body);
    if (token.isPresent()) {
      return token.get();
    }
    access.authenticate(method, rawPath, headers);
    String path = URLDecoder.decode(rawPath, StandardCharsets.UTF_8);
    List<String> seg = new ArrayList<>(List.of(path.replaceAll("^/+|/+$", "").split("/")));
    List<String> low = seg.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    synchronized (state) {
      limits.check(method, rawPath);
      checkSubscriptionAndApi(seg, low, q);
      // /subscriptions/S/providers/Microsoft.Network/locations/L/operations/ID
      if (low.size() == 8 && "locations".equals(low.get(4)) && "operations".equals(low.get(6)) && "GET".equals(method)) {
        ConditionalGet.check(state.settings, headers, null, "operation " + seg.get(7));
        return operations.poll(seg.get(7));
      }
      boolean inRg = low.size() > 3 && "resourcegroups".equals(low.get(2));
      int p = inRg ? 4 : 2; // index of "providers"
      if (low.size() <= p + 2 || !"providers".equals(low.get(p))) {
        throw new ArmError(404, "InvalidResourceType", "unsupported path " + path);
      }
      String type = low.get(p + 2);
      ResourceCall r = new ResourceCall(method, rawPath, q, headers, body, inRg ? seg.get(3) : null,
          seg.subList(p + 3, seg.size()), low.subList(p + 3, low.size()));
      if (!"GET".equals(method) && !("PUT".equals(method) && "networkinterfaces".equals(type) && r.rest().size() == 1)) {
        throw new ArmError(405, "MethodNotAllowed", method + " is not served by the fake for " + path);
      }
      Answer answer = resources.serve(type, r);
      if (answer == null) {
        throw new ArmError(404, "InvalidResourceType", "The fake ARM server does not serve " + method + " " + path);
      }
      return answer;
    }
  }

  /** This server's subscription, and the api-version of the provider the path names. */
  private void checkSubscriptionAndApi(List<String> seg, List<String> low, Map<String, String> q) {
    if (low.size() < 2 || !"subscriptions".equals(low.get(0)) || !low.get(1).equalsIgnoreCase(state.subscription)) {
      throw new ArmError(404, "SubscriptionNotFound", "The subscription '" + (low.size() > 1 ? seg.get(1) : "")
          + "' could not be found.");
    }
    String provider = low.contains("microsoft.compute") ? "compute" : "network";
    String wanted = "compute".equals(provider) ? ArmServer.COMPUTE_API : ArmServer.NETWORK_API;
    if (low.contains("virtualmachinescalesets") && low.contains("networkinterfaces")) {
      provider = "network (scale-set NIC)";
      wanted = ArmServer.SCALE_SET_NIC_API;
    }
    String api = q.get("api-version");
    if (api == null) {
      throw new ArmError(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required.");
    }
    if (!api.equals(wanted)) {
      throw new ArmError(400, "InvalidApiVersionParameter", "fake ARM server serves " + provider + " at api-version "
          + wanted + " only, got " + api);
    }
  }
}
