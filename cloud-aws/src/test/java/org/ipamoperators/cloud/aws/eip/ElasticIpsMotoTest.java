package org.ipamoperators.cloud.aws.eip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2Clients;
import org.ipamoperators.testsupport.moto.FaultProxy;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.AllocateAddressRequest;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/** The Elastic IP calls against moto's EC2 server, through the real SDK and HTTP. */
@MotoTest
class ElasticIpsMotoTest {

  private static Instance instance(Ec2Client ec2, String subnet) {
    return ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet).minCount(1)
        .maxCount(1)).instances().get(0);
  }

  private static String subnet(Ec2Client ec2) {
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.0.0.0/16")).vpc().vpcId();
    return ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.1.0/24").availabilityZone("us-east-1a")).subnet()
        .subnetId();
  }

  @Test
  void allocateTaggedFindByTagsAssociateDisassociateRelease(Ec2Client ec2) {
    ElasticIps eips = new ElasticIps(ec2);
    String subnet = subnet(ec2);
    Instance i = instance(ec2, subnet);
    NetworkInterface extra = ec2.createNetworkInterface(r -> r.subnetId(subnet)).networkInterface();
    ec2.attachNetworkInterface(r -> r.networkInterfaceId(extra.networkInterfaceId()).instanceId(i.instanceId())
        .deviceIndex(1));

    ElasticIp a = eips.allocate(Map.of("k8s/uid", "u1", "cluster", "c1"), null);
    ElasticIp other = eips.allocate(Map.of("k8s/uid", "u2", "cluster", "c1"), null);
    assertThat(a.allocationId()).startsWith("eipalloc-");
    assertThat(eips.withTags(Map.of("k8s/uid", "u1"))).singleElement().satisfies(x -> {
      assertThat(x.allocationId()).isEqualTo(a.allocationId());
      assertThat(x.tags()).containsEntry("cluster", "c1");
      assertThat(x.associated()).isFalse();
    });
    assertThat(eips.withTags(Map.of("cluster", "c1"))).extracting(ElasticIp::allocationId)
        .containsExactlyInAnyOrder(a.allocationId(), other.allocationId());
    assertThat(eips.withTags(Map.of("cluster", "c1", "k8s/uid", "u2"))).extracting(ElasticIp::allocationId)
        .containsExactly(other.allocationId());

    // The ENI holding a private address, from DescribeInstances.
    assertThat(eips.interfaceHolding(i.instanceId(), extra.privateIpAddress())).contains(extra.networkInterfaceId());
    assertThat(eips.interfaceHolding(i.instanceId(), "10.0.1.250")).isEmpty();
    assertThat(eips.interfaces(i.instanceId())).extracting(InstanceInterface::deviceIndex).containsExactly(0, 1);

    String association = eips.associate(a.allocationId(), extra.networkInterfaceId(), extra.privateIpAddress());
    ElasticIp associated = eips.byAllocationId(a.allocationId()).orElseThrow();
    assertThat(associated.associationId()).isEqualTo(association);
    assertThat(associated.associatedTo(extra.networkInterfaceId(), extra.privateIpAddress())).isTrue();

    eips.disassociate(association);
    eips.disassociate(association); // gone already: success
    assertThat(eips.byAllocationId(a.allocationId()).orElseThrow().associated()).isFalse();

    eips.tag(a.allocationId(), Map.of("extra", "1"));
    eips.untag(a.allocationId(), List.of("k8s/uid"));
    assertThat(eips.byAllocationId(a.allocationId()).orElseThrow().tags()).containsEntry("extra", "1")
        .doesNotContainKey("k8s/uid");

    assertThat(eips.release(a.allocationId())).isTrue();
    assertThat(eips.release(a.allocationId())).isFalse();
    assertThat(eips.byAllocationId(a.allocationId())).isEmpty();
    assertThat(eips.count()).isEqualTo(1);
    assertThat(eips.quota()).hasValue(5); // moto's vpc-max-elastic-ips
  }

  @Test
  void providerIdsOfNonAwsNodesHaveNoInstance() {
    assertThat(ElasticIps.instanceId("aws:///us-east-1a/i-0abc")).contains("i-0abc");
    assertThat(ElasticIps.instanceId("kind://docker/kind/kind-worker")).isEmpty();
    assertThat(ElasticIps.instanceId(null)).isEmpty();
  }

  /**
   * moto ignores {@code PublicIpv4Pool} (no BYOIP pools in moto 5.2): the request is checked on its way out,
   * so what EC2 receives is tested even where moto cannot answer like EC2.
   */
  @Test
  void aByoipPoolIsNamedInAllocateAddress(MotoServer moto) {
    AtomicReference<AllocateAddressRequest> sent = new AtomicReference<>();
    AwsSettings s = AwsSettings.of(MotoServer.REGION.id()).withEndpoint(moto.endpoint())
        .withKeys(new AwsSettings.StaticKeys("test", "test"));
    try (Ec2Client ec2 = Ec2Clients.builder(s).overrideConfiguration(o -> o.retryStrategy(Ec2Clients.builder(s)
        .overrideConfiguration().retryStrategy().orElseThrow()).addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof AllocateAddressRequest r) {
              sent.set(r);
            }
          }
        })).build()) {
      new ElasticIps(ec2).allocate(Map.of("a", "b"), "ipv4pool-ec2-0123456789abcdef0");
      assertThat(sent.get().publicIpv4Pool()).isEqualTo("ipv4pool-ec2-0123456789abcdef0");
      assertThat(sent.get().tagSpecifications()).singleElement()
          .satisfies(t -> assertThat(t.tags()).extracting(x -> x.key() + "=" + x.value()).containsExactly("a=b"));
    }
  }

  @Test
  void throttledCallsAreRetriedAndAFailureCarriesTheAwsCode(MotoServer moto) throws Exception {
    try (FaultProxy proxy = new FaultProxy(moto.endpoint())) {
      AwsSettings s = AwsSettings.of(MotoServer.REGION.id()).withEndpoint(proxy.endpoint())
          .withKeys(new AwsSettings.StaticKeys("test", "test"))
          .withRetries(4, Duration.ofMillis(10), Duration.ofMillis(100));
      try (Ec2Client ec2 = Ec2Clients.build(s)) {
        ElasticIps eips = new ElasticIps(ec2);
        proxy.inject("AllocateAddress", null, FaultProxy.Fault.THROTTLE, 2);
        ElasticIp a = eips.allocate(Map.of("t", "1"), null);
        assertThat(eips.withTags(Map.of("t", "1"))).extracting(ElasticIp::allocationId)
            .containsExactly(a.allocationId());
        proxy.inject("DescribeAddresses", null, FaultProxy.Fault.THROTTLE, 10);
        assertThatThrownBy(() -> eips.withTags(Map.of("t", "1"))).isInstanceOfSatisfying(ElasticIpException.class,
            e -> {
              assertThat(e.code()).isEqualTo("RequestLimitExceeded");
              assertThat(e.call()).isEqualTo("DescribeAddresses");
              assertThat(e.retryable()).isTrue();
            });
      }
    }
  }
}
