package org.ipamoperators.cloud.aws.eip;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2Clients;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.protocols.jsoncore.JsonNodeParser;

/**
 * Service Quotas' GetServiceQuota, the current source of an account's limits (the Elastic IP quota is
 * {@code ec2}/{@code L-0263D0A3}, "EC2-VPC Elastic IPs"). One JSON 1.1 call signed with the SDK's SigV4 signer:
 * the SDK's {@code servicequotas} module is not published at the version of the SDK BOM this build uses (the
 * registry stops at 2.40.2, the BOM is 2.56.0), and mixing module versions of the SDK is not supported.
 * Every failure (no permission, unknown quota, unreachable) is an {@link ElasticIpException}; callers fall back.
 */
public final class ServiceQuotas implements AutoCloseable {
  public static final String EC2 = "ec2";
  public static final String ELASTIC_IPS = "L-0263D0A3";
  static final String TARGET = "ServiceQuotasV20190624.GetServiceQuota";

  private final URI endpoint;
  private final String region;
  private final AwsCredentialsProvider credentials;
  private final SdkHttpClient http;

  public ServiceQuotas(URI endpoint, String region, AwsCredentialsProvider credentials) {
    this.endpoint = endpoint;
    this.region = region;
    this.credentials = credentials;
    this.http = UrlConnectionHttpClient.create();
  }

  /** Service Quotas of the settings' region; their endpoint override (tests, a proxy) serves it too. */
  public static ServiceQuotas create(AwsSettings settings) {
    return new ServiceQuotas(settings.endpoint() != null ? settings.endpoint() : publicEndpoint(settings.region()),
        settings.region(), Ec2Clients.credentials(settings));
  }

  static URI publicEndpoint(String region) {
    String suffix = region.toLowerCase(Locale.ROOT).startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com";
    return URI.create("https://servicequotas." + region + "." + suffix);
  }

  /** The applied value of a quota (GetServiceQuota), empty when Service Quotas gives none. */
  public OptionalInt quota(String serviceCode, String quotaCode) {
    byte[] body = ("{\"ServiceCode\":\"" + serviceCode + "\",\"QuotaCode\":\"" + quotaCode + "\"}")
        .getBytes(StandardCharsets.UTF_8);
    SdkHttpFullRequest request = SdkHttpFullRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)
        .encodedPath(endpoint.getRawPath() == null || endpoint.getRawPath().isEmpty() ? "/" : endpoint.getRawPath())
        .putHeader("Content-Type", "application/x-amz-json-1.1")
        .putHeader("X-Amz-Target", TARGET)
        .putHeader("Content-Length", Integer.toString(body.length))
        .build();
    String answer;
    int status;
    try {
      SignedRequest signed = AwsV4HttpSigner.create().sign(r -> r.identity(credentials.resolveCredentials())
          .request(request).payload(ContentStreamProvider.fromByteArray(body))
          .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "servicequotas")
          .putProperty(AwsV4HttpSigner.REGION_NAME, region));
      HttpExecuteResponse response = http.prepareRequest(HttpExecuteRequest.builder().request(signed.request())
          .contentStreamProvider(signed.payload().orElse(null)).build()).call();
      status = response.httpResponse().statusCode();
      Optional<? extends InputStream> in = response.responseBody();
      answer = in.isEmpty() ? "" : new String(in.get().readAllBytes(), StandardCharsets.UTF_8);
      if (in.isPresent()) {
        in.get().close();
      }
    } catch (IOException | RuntimeException e) {
      throw new ElasticIpException("GetServiceQuota", "Unreachable", "Service Quotas at " + endpoint
          + " did not answer: " + e.getMessage(), true);
    }
    JsonNode json;
    try {
      json = answer.isBlank() ? JsonNode.emptyObjectNode() : JsonNodeParser.create().parse(answer);
    } catch (RuntimeException e) {
      throw new ElasticIpException("GetServiceQuota", "BadAnswer", "HTTP " + status + ", not JSON: " + answer, false);
    }
    if (status / 100 != 2) {
      String code = json.isObject() ? json.field("__type").map(JsonNode::text).orElse("HTTP" + status) : "HTTP" + status;
      code = code.substring(code.lastIndexOf('#') + 1);
      String message = json.isObject() ? json.field("message").or(() -> json.field("Message")).map(JsonNode::text)
          .orElse(answer) : answer;
      throw new ElasticIpException("GetServiceQuota", code, message, status >= 500 || code.contains("Throttling"));
    }
    return json.field("Quota").flatMap(q -> q.field("Value")).filter(JsonNode::isNumber)
        .map(v -> OptionalInt.of((int) Double.parseDouble(v.asNumber()))).orElse(OptionalInt.empty());
  }

  @Override
  public void close() {
    http.close();
  }
}
