package org.ipamoperators.egressip.cloud;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2NodeNetwork;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.network.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bare metal where no cloud API is needed; EC2 on AWS, with the region from Infrastructure (or the
 * setting), static keys from the old operator's Secret when it is there, else the SDK's default
 * chain (web identity, instance profile, environment). The EC2 network is kept while its region,
 * endpoint and keys stay the same, and rebuilt (the old client closed) when one changes.
 * Secret values are never logged.
 */
public final class CloudNodeNetworks implements NodeNetworks {
  private static final Logger LOG = LoggerFactory.getLogger(CloudNodeNetworks.class);
  private final KubernetesClient client;
  private final CloudSettings settings;
  private final NodeNetwork bareMetal = new BareMetalNodeNetwork();
  private final AzureNetworks azure;
  private AwsSettings current;
  private Ec2NodeNetwork aws;

  public CloudNodeNetworks(KubernetesClient client, CloudSettings settings) {
    this(client, settings, AzureNetworks.fromEnvironment(client, settings.operatorNamespace()));
  }

  /** With the Azure part given (tests: the ARM server's endpoint, TLS trust and credential). */
  public CloudNodeNetworks(KubernetesClient client, CloudSettings settings, AzureNetworks azure) {
    this.client = client;
    this.settings = settings;
    this.azure = azure;
  }

  @Override
  public synchronized Selection select(Platform platform) {
    if ("Azure".equals(platform.type())) {
      return azure.select(platform, bareMetal);
    }
    if (!"AWS".equals(platform.type())) {
      return new Selection(bareMetal, null);
    }
    AwsSettings wanted;
    try {
      wanted = awsSettings(platform);
    } catch (RuntimeException e) {
      return new Selection(bareMetal, e.getMessage());
    }
    if (!wanted.equals(current)) {
      if (aws != null) {
        aws.close();
      }
      LOG.info("EC2 in region {}{}, credentials from {}", wanted.region(),
          wanted.endpoint() == null ? "" : " at " + wanted.endpoint(),
          wanted.keys() == null ? "the default chain" : "Secret " + CloudSettings.CREDENTIALS_SECRET);
      aws = Ec2NodeNetwork.create(wanted);
      current = wanted;
    }
    return new Selection(aws, null);
  }

  AwsSettings awsSettings(Platform platform) {
    String region = settings.awsRegion() != null ? settings.awsRegion() : platform.awsRegion();
    if (region == null) {
      throw new IllegalStateException("no AWS region: Infrastructure has no status.platformStatus.aws.region "
          + "and IPAM_AWS_REGION is not set");
    }
    AwsSettings s = AwsSettings.of(region).withEndpoint(settings.awsEndpoint());
    AwsSettings.StaticKeys keys = secretKeys();
    return keys == null ? s : s.withKeys(keys);
  }

  /** The keys of the old Secret, or null when it is absent (then the default chain applies). */
  private AwsSettings.StaticKeys secretKeys() {
    String ns = settings.operatorNamespace() != null ? settings.operatorNamespace() : client.getNamespace();
    if (ns == null) {
      return null;
    }
    Secret secret;
    try {
      secret = client.secrets().inNamespace(ns).withName(CloudSettings.CREDENTIALS_SECRET).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        return null; // not allowed to read it: the default chain it is
      }
      throw new IllegalStateException("cannot read Secret " + ns + "/" + CloudSettings.CREDENTIALS_SECRET + ": "
          + e.getMessage(), e);
    }
    if (secret == null) {
      return null;
    }
    String id = value(secret, "aws_access_key_id");
    String key = value(secret, "aws_secret_access_key");
    if (id == null && key == null) {
      return null;
    }
    if (id == null || key == null) {
      throw new IllegalStateException("Secret " + ns + "/" + CloudSettings.CREDENTIALS_SECRET
          + " needs both aws_access_key_id and aws_secret_access_key");
    }
    return new AwsSettings.StaticKeys(id, key);
  }

  private static String value(Secret s, String key) {
    Map<String, String> data = s.getData();
    if (data != null && data.get(key) != null) {
      return blankToNull(new String(Base64.getDecoder().decode(data.get(key)), StandardCharsets.UTF_8).trim());
    }
    Map<String, String> plain = s.getStringData();
    return plain == null ? null : blankToNull(Objects.toString(plain.get(key), "").trim());
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
