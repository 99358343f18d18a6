package org.ipamoperators.cloud.aws;

import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * An EC2 call that failed after the SDK's retries: which call, AWS's error code and whether a later
 * attempt may help (throttling, 5xx, network) or not (a terminated instance, a bad parameter).
 */
final class Ec2CallFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final String call;
  final String code;
  final boolean retryable;

  Ec2CallFailed(String call, String code, String message, boolean retryable) {
    super(message, null, false, false);
    this.call = call;
    this.code = code;
    this.retryable = retryable;
  }

  /** Runs one SDK call, turning its failure into an {@link Ec2CallFailed} named after the call. */
  static <T> T call(String call, Supplier<T> body) {
    try {
      return body.get();
    } catch (AwsServiceException e) {
      String code = e.awsErrorDetails() != null && e.awsErrorDetails().errorCode() != null
          ? e.awsErrorDetails().errorCode() : "HTTP" + e.statusCode();
      String message = e.awsErrorDetails() != null && e.awsErrorDetails().errorMessage() != null
          ? e.awsErrorDetails().errorMessage() : e.getMessage();
      boolean retryable = e.isThrottlingException() || e.statusCode() >= 500 || e.retryable();
      throw new Ec2CallFailed(call, code, message, retryable);
    } catch (SdkClientException e) {
      throw new Ec2CallFailed(call, "ClientError", e.getMessage(), true);
    } catch (SdkException e) {
      throw new Ec2CallFailed(call, "SdkError", e.getMessage(), e.retryable());
    }
  }

  /** "AssignPrivateIpAddresses failed: ... (PrivateIpAddressLimitExceeded)", for Events and conditions. */
  String describe() {
    return call + " failed: " + getMessage();
  }
}
