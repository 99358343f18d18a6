package org.ipamoperators.cloud.aws;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How to reach EC2: the region, an optional endpoint (tests, VPC endpoints), optional static keys
 * (the old operator's Secret; without them the SDK's default chain applies: web identity, instance
 * profile, environment), and the retry budget for throttling and 5xx answers.
 */
public record AwsSettings(String region, URI endpoint, StaticKeys keys, int maxAttempts, Duration baseDelay,
    Duration maxBackoff, Duration capacityCacheTtl) {

  public static final int DEFAULT_MAX_ATTEMPTS = 8;
  public static final Duration DEFAULT_BASE_DELAY = Duration.ofMillis(200);
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(20);
  public static final Duration DEFAULT_CAPACITY_TTL = Duration.ofHours(6);

  public AwsSettings {
    Objects.requireNonNull(region, "region");
    if (region.isBlank()) {
      throw new IllegalArgumentException("an AWS region is needed (Infrastructure status.platformStatus.aws.region "
          + "or the region setting)");
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
    }
    Objects.requireNonNull(baseDelay, "baseDelay");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(capacityCacheTtl, "capacityCacheTtl");
  }

  /** The region with the default chain, the public endpoint and the default retry budget. */
  public static AwsSettings of(String region) {
    return new AwsSettings(region, null, null, DEFAULT_MAX_ATTEMPTS, DEFAULT_BASE_DELAY, DEFAULT_MAX_BACKOFF,
        DEFAULT_CAPACITY_TTL);
  }

  public AwsSettings withEndpoint(URI endpoint) {
    return new AwsSettings(region, endpoint, keys, maxAttempts, baseDelay, maxBackoff, capacityCacheTtl);
  }

  public AwsSettings withKeys(StaticKeys keys) {
    return new AwsSettings(region, endpoint, keys, maxAttempts, baseDelay, maxBackoff, capacityCacheTtl);
  }

  public AwsSettings withRetries(int maxAttempts, Duration baseDelay, Duration maxBackoff) {
    return new AwsSettings(region, endpoint, keys, maxAttempts, baseDelay, maxBackoff, capacityCacheTtl);
  }

  public AwsSettings withCapacityCacheTtl(Duration ttl) {
    return new AwsSettings(region, endpoint, keys, maxAttempts, baseDelay, maxBackoff, ttl);
  }

  /** Static keys, such as {@code aws_access_key_id}/{@code aws_secret_access_key} of a Secret. Never printed. */
  public record StaticKeys(String accessKeyId, String secretAccessKey) {
    public StaticKeys {
      if (accessKeyId == null || accessKeyId.isBlank() || secretAccessKey == null || secretAccessKey.isBlank()) {
        throw new IllegalArgumentException("both an access key id and a secret access key are needed");
      }
    }

    @Override
    public String toString() {
      return "StaticKeys[accessKeyId=<redacted>, secretAccessKey=<redacted>]";
    }
  }
}
