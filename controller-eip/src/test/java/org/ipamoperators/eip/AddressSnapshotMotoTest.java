package org.ipamoperators.eip;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.testsupport.MutableClock;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.ec2.Ec2Client;

/** The shared snapshot of the cluster's addresses against moto, with the calls counted and the clock in hand. */
@MotoTest
class AddressSnapshotMotoTest {
  private static final Duration AGE = Duration.ofSeconds(30);
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-27T10:00:00Z"));

  private ElasticIps counted(MotoServer moto) {
    return new ElasticIps(Ec2Client.builder().endpointOverride(moto.endpoint()).region(MotoServer.REGION)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            calls.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
          }
        })).build());
  }

  private long describes() {
    synchronized (calls) {
      return calls.stream().filter("DescribeAddresses"::equals).count();
    }
  }

  @Test
  void oneDescribeServesEveryEipWhileFreshAndChangedOrUnknownOnesAreAskedDirectly(MotoServer moto) {
    ElasticIps ec2 = counted(moto);
    String cluster = "snap-" + System.nanoTime();
    List<String> uids = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      uids.add(cluster + "-uid-" + i);
      ec2.allocate(Map.of(EipNames.TAG_CLUSTER, cluster, EipNames.TAG_UID, uids.get(i)), null);
    }
    AddressSnapshot snapshot = new AddressSnapshot(ec2, Map.of(EipNames.TAG_CLUSTER, cluster), AGE, clock);

    long before = describes();
    for (String uid : uids) {
      assertThat(snapshot.tagged(uid)).singleElement().extracting(a -> a.tag(EipNames.TAG_UID)).isEqualTo(uid);
    }
    assertThat(describes() - before).as("one call for ten Eips").isEqualTo(1);

    // A UID the snapshot does not show (a new Eip) is asked directly: never allocated twice on a snapshot's word.
    String fresh = cluster + "-new";
    ElasticIp added = ec2.allocate(Map.of(EipNames.TAG_CLUSTER, cluster, EipNames.TAG_UID, fresh), null);
    assertThat(snapshot.tagged(fresh)).extracting(ElasticIp::allocationId).containsExactly(added.allocationId());
    assertThat(describes() - before).isEqualTo(2);

    // Changed by this controller: asked directly until a snapshot taken afterwards.
    String changed = uids.get(3);
    ElasticIp mine = snapshot.tagged(changed).get(0);
    ec2.release(mine.allocationId());
    snapshot.changed(changed);
    assertThat(snapshot.tagged(changed)).isEmpty();
    assertThat(describes() - before).isEqualTo(3);

    // Stale after its age: one new call, which shows the change and serves the changed UID again.
    clock.advance(AGE);
    assertThat(snapshot.tagged(uids.get(0))).hasSize(1);
    assertThat(snapshot.tagged(changed)).isEmpty();
    assertThat(snapshot.tagged(fresh)).hasSize(1);
    assertThat(describes() - before).isEqualTo(5); // the refresh, and the released UID no longer in it
  }

  @Test
  void theAgeIsAQuarterOfTheResyncAtMostThirtySeconds() {
    assertThat(EipReconciler.snapshotAge(Duration.ofSeconds(3))).isEqualTo(Duration.ofMillis(750));
    assertThat(EipReconciler.snapshotAge(Duration.ofMinutes(2))).isEqualTo(Duration.ofSeconds(30));
    assertThat(EipReconciler.snapshotAge(Duration.ofMinutes(10))).isEqualTo(Duration.ofSeconds(30));
  }
}
