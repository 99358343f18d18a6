package org.ipamoperators.cloud.azure;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.management.exception.ManagementError;
import com.azure.core.management.exception.ManagementException;
import java.util.Set;
import java.util.function.Supplier;

/**
 * An Azure Resource Manager call that failed after the SDK's own retries: which call, the HTTP
 * status, Azure's error code (the first detail's code when the outer one is the generic
 * {@code RetryableError}) and whether a later attempt may help.
 */
final class ArmCallFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** Codes after which a later attempt may succeed without anyone changing anything. */
  static final Set<String> RETRYABLE_CODES = Set.of("AnotherOperationInProgress", "RetryableError",
      "ReferencedResourceNotProvisioned", "RetryableErrorDueToAnotherOperation", "PreconditionFailed",
      "PreconditionFailedEtagMismatch", "SubscriptionRequestsThrottled", "TooManyRequests",
      "PrivateIPAddressIsAllocated", "CanceledAndSupersededDueToAnotherOperation", "InternalServerError");
  final String call;
  final int status;
  final String code;
  final boolean retryable;

  ArmCallFailed(String call, int status, String code, String message, boolean retryable) {
    super(message, null, false, false);
    this.call = call;
    this.status = status;
    this.code = code;
    this.retryable = retryable;
  }

  /** Runs one SDK call, turning its failure into an {@link ArmCallFailed} named after the call. */
  static <T> T call(String call, AzureMetrics metrics, Supplier<T> body) {
    metrics.call(call);
    try {
      return body.get();
    } catch (ManagementException e) {
      ArmCallFailed f = of(call, e);
      metrics.failure(call, f.code);
      throw f;
    } catch (HttpResponseException e) {
      int status = e.getResponse() == null ? 0 : e.getResponse().getStatusCode();
      ArmCallFailed f = new ArmCallFailed(call, status, "HTTP" + status, e.getMessage(), status == 429 || status >= 500);
      metrics.failure(call, f.code);
      throw f;
    } catch (RuntimeException e) {
      // transport: connection refused, TLS, timeouts, credential failures
      String code = e.getClass().getSimpleName();
      metrics.failure(call, code);
      throw new ArmCallFailed(call, 0, code, String.valueOf(e.getMessage()), true);
    }
  }

  static ArmCallFailed of(String call, ManagementException e) {
    int status = e.getResponse() == null ? 0 : e.getResponse().getStatusCode();
    ManagementError v = e.getValue();
    String code = v == null || v.getCode() == null ? "HTTP" + status : v.getCode();
    String message = v == null || v.getMessage() == null ? e.getMessage() : v.getMessage();
    if (v != null && v.getDetails() != null && !v.getDetails().isEmpty() && v.getDetails().get(0).getCode() != null
        && code.startsWith("RetryableError")) {
      code = v.getDetails().get(0).getCode();
      message = v.getDetails().get(0).getMessage() != null ? v.getDetails().get(0).getMessage() : message;
    }
    boolean retryable = status == 429 || status == 409 || status == 412 || status >= 500
        || RETRYABLE_CODES.contains(code);
    return new ArmCallFailed(call, status, code, message, retryable);
  }

  /** "PutNetworkInterface failed: ... (PrivateIPAddressIsAllocated)". */
  String describe() {
    return call + " failed: " + getMessage() + " (" + code + ")";
  }
}
