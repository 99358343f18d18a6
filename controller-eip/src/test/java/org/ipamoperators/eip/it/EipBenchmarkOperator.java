package org.ipamoperators.eip.it;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2Clients;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.cloud.aws.eip.ServiceQuotas;
import org.ipamoperators.eip.EipControllers;
import org.ipamoperators.eip.EipSettings;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.ec2.Ec2ClientBuilder;

/**
 * The Eip operator in a process of its own, for {@link EipScaleBenchmark}, so that its CPU time and peak memory are
 * its own. Arguments: a kubeconfig file, the namespace it serves, moto's endpoint. The EC2 client is the
 * production one ({@link Ec2Clients}: retries, URL connection HTTP) with a counter of calls by operation. Prints
 * {@code SYNCED <epoch ms>} once its caches are synced; when its standard input closes it prints
 * {@code CALLS {op=n, ...}} and stops.
 */
public final class EipBenchmarkOperator {
  private EipBenchmarkOperator() {}

  public static void main(String[] args) throws Exception {
    Config config = Config.fromKubeconfig(Files.readString(Path.of(args[0])));
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    EipSettings settings = EipSettings.from(Map.of(EipSettings.CLUSTER_NAME, "benchmark",
        EipSettings.NAMESPACE, args[1], EipSettings.AWS_REGION, "us-east-1",
        EipSettings.AWS_ENDPOINT_URL, args[2], EipSettings.RESYNC_INTERVAL, "10m",
        EipSettings.ORPHAN_SWEEP_INTERVAL, "10m"));
    AwsSettings aws = settings.aws().withKeys(new AwsSettings.StaticKeys("test", "test"));
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    Ec2ClientBuilder b = Ec2Clients.builder(aws);
    b.overrideConfiguration(b.overrideConfiguration().toBuilder().addExecutionInterceptor(new ExecutionInterceptor() {
      @Override
      public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        calls.merge(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), 1, Integer::sum);
      }
    }).build());
    ElasticIps ec2 = new ElasticIps(b.build(), new ServiceQuotas(URI.create(args[2]), aws.region(),
        Ec2Clients.credentials(aws)));
    Operator operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(true));
    EipControllers.register(operator, client, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
        settings.withAws(aws), ec2);
    operator.start();
    System.out.println("SYNCED " + System.currentTimeMillis());
    System.out.flush();
    while (System.in.read() >= 0) {
      // until the benchmark closes our input
    }
    System.out.println("CALLS " + new TreeMap<>(calls));
    System.out.flush();
    operator.stop();
    System.exit(0);
  }
}
