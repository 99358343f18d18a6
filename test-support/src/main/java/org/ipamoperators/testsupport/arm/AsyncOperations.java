package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The long-running operations of NIC PUTs: started by the PUT, polled through
 * {@code …/locations/L/operations/ID} (or through the NIC when the PUT sent no operation URL), ended
 * after the polls and time the settings ask for, {@code Failed} with a rollback when a test queued
 * a failure. Callers hold the state's monitor.
 */
final class AsyncOperations {
  private final ArmState state;
  private final URI endpoint;
  private final List<AsyncOperation.Failure> failures = new ArrayList<>();

  AsyncOperations(ArmState state, URI endpoint) {
    this.state = state;
    this.endpoint = endpoint;
  }

  /** The next NIC PUT's operation ends {@code Failed} with this error. */
  void failNext(String code, String message) {
    failures.add(new AsyncOperation.Failure(code, message));
  }

  /**
   * The operation of an accepted PUT of {@code target} (its configurations were {@code before}):
   * finished at once, or left running for the polls, as the put mode says. The PUT answer's headers.
   */
  Map<String, String> start(String key, Nic target, boolean create, List<ObjectNode> before) {
    String opId = UUID.randomUUID().toString();
    AsyncOperation op = new AsyncOperation(opId, key);
    op.rollback = before;
    if (!failures.isEmpty()) {
      op.failure = failures.remove(0);
    }
    state.operations.put(opId.toLowerCase(Locale.ROOT), op);
    Map<String, String> h = new LinkedHashMap<>();
    h.put("Retry-After", String.valueOf(state.settings.retryAfterSeconds));
    ArmServer.PutMode putMode = state.settings.putMode;
    if (putMode == ArmServer.PutMode.SUCCEEDED && op.failure == null) {
      finish(op);
    } else {
      target.state = create ? "Creating" : "Updating";
      target.runningOperation = opId;
    }
    if (putMode != ArmServer.PutMode.UPDATING_WITHOUT_ASYNC_HEADER) {
      h.put("Azure-AsyncOperation", url(opId));
    } else {
      // the SDK then polls the NIC itself: the operation ends on the polls of the NIC
      op.polls = 0;
    }
    return h;
  }

  /** {@code GET …/operations/ID}: one poll, which may end the operation. */
  Answer poll(String id) {
    AsyncOperation op = state.operations.get(id.toLowerCase(Locale.ROOT));
    if (op == null) {
      throw new ArmError(404, "OperationNotFound", "operation " + id + " not found");
    }
    op.polls++;
    if ("InProgress".equals(op.status) && op.polls >= state.settings.pollsUntilDone
        && !Instant.now().isBefore(op.started.plus(state.settings.operationTime))) {
      finish(op);
    }
    ObjectNode out = JsonNodeFactory.instance.objectNode().put("id", "/subscriptions/" + state.subscription
        + "/providers/Microsoft.Network/locations/" + state.location + "/operations/" + op.id).put("name", op.id)
        .put("status", op.status).put("startTime", op.started.toString());
    Map<String, String> h = Map.of();
    if ("InProgress".equals(op.status)) {
      h = Map.of("Retry-After", String.valueOf(state.settings.retryAfterSeconds));
    } else {
      out.put("endTime", Instant.now().toString());
    }
    if (op.failure != null && "Failed".equals(op.status)) {
      ObjectNode err = out.putObject("error").put("code", op.failure.code()).put("message", op.failure.message());
      err.putArray("details");
    }
    return new Answer(200, out, h);
  }

  /** Advances operations polled through the resource (no async header mode). */
  void advanceByResourcePoll(Nic nic) {
    if (nic.runningOperation != null && state.settings.putMode == ArmServer.PutMode.UPDATING_WITHOUT_ASYNC_HEADER) {
      AsyncOperation op = state.operations.get(nic.runningOperation.toLowerCase(Locale.ROOT));
      op.polls++;
      if (op.polls > state.settings.pollsUntilDone
          && !Instant.now().isBefore(op.started.plus(state.settings.operationTime))) {
        finish(op);
      }
    }
  }

  String url(String id) {
    return endpoint + "subscriptions/" + state.subscription + "/providers/Microsoft.Network/locations/"
        + state.location + "/operations/" + id + "?api-version=" + ArmServer.NETWORK_API;
  }

  private void finish(AsyncOperation op) {
    Nic nic = state.nics.get(op.nicKey);
    if (op.failure != null) {
      op.status = "Failed";
      if (nic != null) {
        nic.configs = op.rollback;
        nic.state = "Failed";
        nic.etag = ArmState.newEtag();
      }
    } else {
      op.status = "Succeeded";
      if (nic != null) {
        nic.state = "Succeeded";
      }
    }
    if (nic != null && op.id.equals(nic.runningOperation)) {
      nic.runningOperation = null;
    }
  }
}
