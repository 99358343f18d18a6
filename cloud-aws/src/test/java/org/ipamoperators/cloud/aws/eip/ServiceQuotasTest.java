package org.ipamoperators.cloud.aws.eip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * The Elastic IP quota: Service Quotas first, the EC2 account attribute when it cannot answer. moto 5.1.22 serves
 * GetServiceQuota only for service code {@code vpc}: the request format is checked against moto with a vpc quota,
 * the fallback against moto's answer for {@code ec2}/{@code L-0263D0A3} (NoSuchResourceException), and the EIP quota
 * itself against a fake Service Quotas (the gap: moto knows no ec2 quota).
 */
@MotoTest
class ServiceQuotasTest {
  private static final StaticCredentialsProvider KEYS =
      StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));

  @Test
  void theRequestIsWhatServiceQuotasUnderstands(MotoServer moto) {
    try (ServiceQuotas sq = new ServiceQuotas(moto.endpoint(), MotoServer.REGION.id(), KEYS)) {
      // "Active VPC peering connections per VPC", default 50 in moto's table
      assertThat(sq.quota("vpc", "L-7E9ECCDB")).hasValue(50);
      assertThatThrownBy(() -> sq.quota(ServiceQuotas.EC2, ServiceQuotas.ELASTIC_IPS))
          .isInstanceOfSatisfying(ElasticIpException.class,
              e -> assertThat(e.code()).isEqualTo("NoSuchResourceException"));
    }
  }

  @Test
  void withoutAnAnswerFromServiceQuotasTheAccountAttributeIsTheQuota(MotoServer moto, Ec2Client ec2) {
    ElasticIps eips = ElasticIps.create(AwsSettings.of(MotoServer.REGION.id()).withEndpoint(moto.endpoint())
        .withKeys(new AwsSettings.StaticKeys("test", "test")));
    assertThat(eips.quota()).hasValue(5); // moto's vpc-max-elastic-ips
    assertThat(eips.quotaSource()).isEqualTo("EC2 account attribute vpc-max-elastic-ips");
  }

  @Test
  void serviceQuotasWinsOverTheAccountAttribute(MotoServer moto, Ec2Client ec2) throws Exception {
    List<String> requests = new CopyOnWriteArrayList<>();
    HttpServer fake = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    fake.createContext("/", x -> {
      String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      requests.add(x.getRequestHeaders().getFirst("X-Amz-Target") + " " + body + " "
          + x.getRequestHeaders().getFirst("Authorization"));
      byte[] answer = ("{\"Quota\":{\"ServiceCode\":\"ec2\",\"QuotaCode\":\"L-0263D0A3\","
          + "\"QuotaName\":\"EC2-VPC Elastic IPs\",\"Value\":7.0,\"Unit\":\"None\"}}").getBytes(StandardCharsets.UTF_8);
      x.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.1");
      x.sendResponseHeaders(200, answer.length);
      x.getResponseBody().write(answer);
      x.close();
    });
    fake.start();
    try (ServiceQuotas sq = new ServiceQuotas(URI.create("http://127.0.0.1:" + fake.getAddress().getPort()),
        MotoServer.REGION.id(), KEYS)) {
      ElasticIps eips = new ElasticIps(ec2, sq);
      assertThat(eips.quota()).hasValue(7); // moto's account attribute says 5
      assertThat(eips.quotaSource()).isEqualTo("Service Quotas L-0263D0A3");
      assertThat(requests).singleElement().satisfies(r -> assertThat(r)
          .startsWith("ServiceQuotasV20190624.GetServiceQuota {\"ServiceCode\":\"ec2\",\"QuotaCode\":\"L-0263D0A3\"}")
          .contains("/" + MotoServer.REGION.id() + "/servicequotas/aws4_request"));
    } finally {
      fake.stop(0);
    }
  }

  @Test
  void theEndpointOfARegion() {
    assertThat(ServiceQuotas.publicEndpoint("eu-west-1")).hasToString("https://servicequotas.eu-west-1.amazonaws.com");
    assertThat(ServiceQuotas.publicEndpoint("cn-north-1"))
        .hasToString("https://servicequotas.cn-north-1.amazonaws.com.cn");
  }
}
