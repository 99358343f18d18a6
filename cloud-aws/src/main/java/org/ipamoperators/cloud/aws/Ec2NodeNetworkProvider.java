package org.ipamoperators.cloud.aws;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the {@code AWS} platform with an {@link Ec2NodeNetwork}: the region from the
 * {@code aws.region} setting, else the platform's ({@code Infrastructure}
 * {@code status.platformStatus.aws.region}); static keys from the old operator's Secret when it is
 * there, else the SDK's default chain (web identity, instance profile, environment). Secret values
 * are never logged.
 */
public final class Ec2NodeNetworkProvider implements NodeNetworkProvider {
  /** The provider's name. */
  public static final String NAME = "aws";
  /** The old operator's Secret, still read for compatibility. */
  public static final String CREDENTIALS_SECRET = "egress-ipam-operator-cloud-credentials";
  /** Setting: the region, when the platform does not report one. */
  public static final ProviderSetting REGION = new ProviderSetting("aws.region",
      "AWS region, when Infrastructure has no status.platformStatus.aws.region");
  /** Setting: an EC2 endpoint (VPC endpoints, tests). */
  public static final ProviderSetting ENDPOINT = new ProviderSetting("aws.endpoint",
      "EC2 endpoint URL instead of the region's public one (VPC endpoints, tests)");
  private static final Logger LOG = LoggerFactory.getLogger(Ec2NodeNetworkProvider.class);

  /** For {@link java.util.ServiceLoader}. */
  public Ec2NodeNetworkProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> platforms() {
    return Set.of("AWS");
  }

  @Override
  public List<ProviderSetting> settings() {
    return List.of(REGION, ENDPOINT);
  }

  @Override
  public Set<String> secrets() {
    return Set.of(CREDENTIALS_SECRET);
  }

  @Override
  public NodeNetwork create(ProviderContext context) throws NodeNetworkException {
    AwsSettings settings = settings(context);
    LOG.info("EC2 in region {}{}, credentials from {}", settings.region(),
        settings.endpoint() == null ? "" : " at " + settings.endpoint(),
        settings.keys() == null ? "the default chain" : "Secret " + CREDENTIALS_SECRET);
    return Ec2NodeNetwork.create(settings);
  }

  /**
   * The EC2 settings a context gives.
   *
   * @param context the platform, settings and Secret data
   * @return region, endpoint and keys
   * @throws NodeNetworkException when there is no region, the endpoint is not a URL, or the Secret
   *     has half a key pair
   */
  public static AwsSettings settings(ProviderContext context) throws NodeNetworkException {
    String region = context.setting(REGION.key()).or(() -> context.attribute("region")).orElseThrow(
        () -> new NodeNetworkException(NAME, "NoRegion", "no AWS region: Infrastructure has no "
            + "status.platformStatus.aws.region and " + REGION.environmentVariable() + " is not set", false, null));
    AwsSettings s = AwsSettings.of(region);
    String endpoint = context.setting(ENDPOINT.key()).orElse(null);
    if (endpoint != null) {
      try {
        s = s.withEndpoint(URI.create(endpoint));
      } catch (IllegalArgumentException e) {
        throw new NodeNetworkException(NAME, "InvalidEndpoint", ENDPOINT.environmentVariable() + " '" + endpoint
            + "' is not a URL", false, e);
      }
    }
    AwsSettings.StaticKeys keys = keys(context.secret(CREDENTIALS_SECRET));
    return keys == null ? s : s.withKeys(keys);
  }

  private static AwsSettings.StaticKeys keys(Map<String, String> secret) throws NodeNetworkException {
    String id = blankToNull(secret.get("aws_access_key_id"));
    String key = blankToNull(secret.get("aws_secret_access_key"));
    if (id == null && key == null) {
      return null;
    }
    if (id == null || key == null) {
      throw new NodeNetworkException(NAME, "IncompleteCredentials", "Secret " + CREDENTIALS_SECRET
          + " needs both aws_access_key_id and aws_secret_access_key", false, null);
    }
    return new AwsSettings.StaticKeys(id, key);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }
}
