package org.ipamoperators.cloud.aws.eip;

import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * An EC2 call about Elastic IPs that failed after the SDK's retries: the call, AWS's error code (such as
 * {@code AddressLimitExceeded}), and whether a later attempt may help. Controllers turn it into a condition and an
 * Event on the one object concerned.
 */
public final class ElasticIpException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  public static final String ADDRESS_LIMIT_EXCEEDED = "AddressLimitExceeded";
  private final String call;
  private final String code;
  private final boolean retryable;

  public ElasticIpException(String call, String code, String message, boolean retryable) {
    super(call + " failed: " + message + " (" + code + ")", null, false, false);
    this.call = call;
    this.code = code;
    this.retryable = retryable;
  }

  public String call() {
    return call;
  }

  /** AWS's error code, {@code ClientError} for a network failure. */
  public String code() {
    return code;
  }

  public boolean retryable() {
    return retryable;
  }

  static <T> T call(String call, Supplier<T> body) {
    try {
      return body.get();
    } catch (AwsServiceException e) {
      String code = e.awsErrorDetails() != null && e.awsErrorDetails().errorCode() != null
          ? e.awsErrorDetails().errorCode() : "HTTP" + e.statusCode();
      String message = e.awsErrorDetails() != null && e.awsErrorDetails().errorMessage() != null
          ? e.awsErrorDetails().errorMessage() : e.getMessage();
      throw new ElasticIpException(call, code, message,
          e.isThrottlingException() || e.statusCode() >= 500 || e.retryable());
    } catch (SdkClientException e) {
      throw new ElasticIpException(call, "ClientError", e.getMessage(), true);
    } catch (SdkException e) {
      throw new ElasticIpException(call, "SdkError", e.getMessage(), e.retryable());
    }
  }
}
