package org.ipamoperators.cloud.aws;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.Ec2ClientBuilder;

/** Builds the EC2 client from {@link AwsSettings}. */
public final class Ec2Clients {
  private Ec2Clients() {}

  public static Ec2Client build(AwsSettings settings) {
    return builder(settings).build();
  }

  /** The configured builder, for callers (tests) that add interceptors. */
  public static Ec2ClientBuilder builder(AwsSettings settings) {
    Ec2ClientBuilder b = Ec2Client.builder()
        .region(Region.of(settings.region()))
        .credentialsProvider(credentials(settings))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .overrideConfiguration(o -> o.retryStrategy(retryStrategy(settings)));
    if (settings.endpoint() != null) {
      b.endpointOverride(settings.endpoint());
    }
    return b;
  }

  /** Static keys when given (the old operator's Secret), else the SDK's default chain. */
  public static AwsCredentialsProvider credentials(AwsSettings settings) {
    if (settings.keys() != null) {
      return StaticCredentialsProvider.create(AwsBasicCredentials.create(settings.keys().accessKeyId(),
          settings.keys().secretAccessKey()));
    }
    return DefaultCredentialsProvider.builder().build();
  }

  /**
   * The SDK's standard strategy, spelled out: throttling codes (RequestLimitExceeded, Throttling...)
   * and 5xx answers are retried up to {@code maxAttempts} with exponential backoff and full jitter,
   * so many nodes retrying at once do not hit the API in step.
   */
  static RetryStrategy retryStrategy(AwsSettings settings) {
    BackoffStrategy backoff = BackoffStrategy.exponentialDelay(settings.baseDelay(), settings.maxBackoff());
    return AwsRetryStrategy.standardRetryStrategy().toBuilder()
        .maxAttempts(settings.maxAttempts())
        .backoffStrategy(backoff)
        .throttlingBackoffStrategy(backoff)
        .build();
  }
}
