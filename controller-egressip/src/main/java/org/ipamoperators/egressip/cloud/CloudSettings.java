package org.ipamoperators.egressip.cloud;

import java.net.URI;

/**
 * Operator settings for cloud modules, each from a system property or else an environment
 * variable: the AWS region when Infrastructure does not give one ({@code ipam.aws.region} /
 * {@code IPAM_AWS_REGION}), an EC2 endpoint override ({@code ipam.aws.endpoint} /
 * {@code IPAM_AWS_ENDPOINT}: tests, VPC endpoints), the namespace holding the credentials Secret
 * ({@code ipam.operator.namespace} / {@code IPAM_OPERATOR_NAMESPACE}, else the client's namespace).
 */
public record CloudSettings(String awsRegion, URI awsEndpoint, String operatorNamespace) {
  /** The old operator's Secret, still read for compatibility. */
  public static final String CREDENTIALS_SECRET = "egress-ipam-operator-cloud-credentials";

  public static CloudSettings fromEnvironment() {
    String endpoint = setting("ipam.aws.endpoint", "IPAM_AWS_ENDPOINT");
    return new CloudSettings(setting("ipam.aws.region", "IPAM_AWS_REGION"),
        endpoint == null ? null : URI.create(endpoint), setting("ipam.operator.namespace", "IPAM_OPERATOR_NAMESPACE"));
  }

  private static String setting(String property, String env) {
    String v = System.getProperty(property, System.getenv(env));
    return v == null || v.isBlank() ? null : v.trim();
  }
}
