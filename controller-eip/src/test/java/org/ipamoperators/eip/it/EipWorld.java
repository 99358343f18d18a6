package org.ipamoperators.eip.it;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.eip.EipControllers;
import org.ipamoperators.eip.EipSettings;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.moto.MotoServer;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;

/**
 * One test's world: a VPC in moto with EC2 instances as nodes, and on the real apiserver the Node objects (provider
 * id, InternalIP, Ready), pods with IPs (set through the status subresource: there is no kubelet) and Eips. Pod IPs
 * are the primary address of an extra ENI attached to the node's instance, because moto records an association's
 * private address as its ENI's primary one whatever PrivateIpAddress says (a gap of moto 5.2, not of EC2).
 * The operator runs in this JVM against both, through an EC2 client whose calls are counted and which can be made
 * to fail chosen calls (for what moto never answers: AddressLimitExceeded, a crash after AllocateAddress).
 */
final class EipWorld implements AutoCloseable {
  static final String CLUSTER = "test-cluster";
  /** 3 s, so the ITs see a resync soon (the steady-state benchmark passes its own). */
  static final Duration RESYNC = Duration.ofSeconds(3);

  final KubernetesClient kube;
  final String ns;
  final Ec2Client ec2;
  final String subnet;
  /** Pod ENIs get fixed addresses here: moto draws ENI addresses at random and may repeat one in a subnet. */
  final String podSubnet;
  private int nextPodIp = 10;
  private int nextHostIp = 10;
  final String zone = "us-east-1a";
  final List<String> calls = Collections.synchronizedList(new ArrayList<>());
  /** The same calls with the thread that made them: the reconcilers' threads are named after their controller. */
  final List<Call> callers = Collections.synchronizedList(new ArrayList<>());
  /** Reconciles of Eips started (JOSDK's metrics hook), so a count of calls can be put beside the work done. */
  final AtomicLong eipReconciles = new AtomicLong();
  /** Operation name → AWS error code to answer with instead (each entry used once). */
  final Map<String, String> failNext = Collections.synchronizedMap(new HashMap<>());
  /** Operation name → throw after EC2 did the work (the operator "dies" before recording it). */
  final Map<String, String> crashAfter = Collections.synchronizedMap(new HashMap<>());
  final List<String> nodes = new ArrayList<>();
  final MeterRegistry registry = new SimpleMeterRegistry();
  private final List<Operator> operators = new ArrayList<>();

  EipWorld(KubernetesClient kube, MotoServer moto) {
    this.kube = kube;
    this.ns = kube.getNamespace();
    this.ec2 = moto.ec2Client();
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.0.0.0/16")).vpc().vpcId();
    this.subnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.1.0/24").availabilityZone(zone)).subnet()
        .subnetId();
    this.podSubnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.2.0/24").availabilityZone(zone)).subnet()
        .subnetId();
    kube.serviceAccounts().resource(new ServiceAccountBuilder().withNewMetadata().withName("default").endMetadata()
        .build()).create();
  }

  /** An EC2 client against the same moto whose calls are logged and may be failed. */
  ElasticIps elasticIps(MotoServer moto) {
    java.util.concurrent.atomic.AtomicBoolean dead = new java.util.concurrent.atomic.AtomicBoolean();
    Ec2Client client = Ec2Client.builder().endpointOverride(moto.endpoint()).region(MotoServer.REGION)
        .credentialsProvider(software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
            software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create("test", "test")))
        .httpClientBuilder(software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient.builder())
        .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            String op = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
            if (dead.get()) {
              throw new IllegalStateException("this operator is dead: no more calls");
            }
            calls.add(op);
            callers.add(new Call(op, Thread.currentThread().getName()));
            String code = failNext.remove(op);
            if (code != null) {
              throw Ec2Exception.builder().statusCode(400).awsErrorDetails(AwsErrorDetails.builder()
                  .errorCode(code).errorMessage("injected by the test: " + code).build()).build();
            }
          }

          @Override
          public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            String op = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
            if (crashAfter.remove(op) != null) {
              dead.set(true);
              throw new IllegalStateException("the operator dies after " + op);
            }
          }
        }))
        .build();
    // moto answers Service Quotas' ec2/L-0263D0A3 with NoSuchResource: the quota comes from the fallback.
    return new ElasticIps(client, new org.ipamoperators.cloud.aws.eip.ServiceQuotas(moto.endpoint(),
        MotoServer.REGION.id(), software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
            software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create("test", "test"))));
  }

  EipSettings settings(Map<String, String> extra) {
    Map<String, String> env = new HashMap<>(Map.of("CLUSTER_NAME", CLUSTER, "AWS_REGION", "us-east-1",
        "EIP_RESYNC_INTERVAL", RESYNC.toSeconds() + "s", "EIP_ORPHAN_SWEEP_INTERVAL", "2s",
        "EIP_FAILOVER_GRACE", "1s", "EIP_FAILOVER_RECOVERY", "3s"));
    env.putAll(extra);
    return EipSettings.from(env);
  }

  Operator start(KubeApiServer server, MotoServer moto, EipSettings settings) {
    KubernetesClient c = server.newClient();
    Operator op = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true)
        .withCacheSyncTimeout(Duration.ofSeconds(30)).withMetrics(new Metrics() {
          @Override
          public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
            if (resource instanceof Eip) {
              eipReconciles.incrementAndGet();
            }
          }
        }));
    EipControllers.register(op, c, registry, settings, elasticIps(moto));
    op.start();
    operators.add(op);
    return op;
  }

  Operator start(KubeApiServer server, MotoServer moto) {
    return start(server, moto, settings(Map.of()));
  }

  /** An EC2 call and the thread that made it. */
  record Call(String operation, String thread) {}

  // --- EC2 -----------------------------------------------------------------------------------------

  record Host(String instanceId, String privateIp) {}

  Host instance() {
    String ip = "10.0.1." + (nextHostIp++);
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet)
        .privateIpAddress(ip).minCount(1).maxCount(1)).instances().get(0);
    return new Host(i.instanceId(), i.privateIpAddress());
  }

  /** An extra ENI on the instance; its primary address serves as a pod IP. Returns {eniId, ip}. */
  String[] podEni(Host host, int deviceIndex) {
    String ip = "10.0.2." + (nextPodIp++);
    NetworkInterface n = ec2.createNetworkInterface(r -> r.subnetId(podSubnet).privateIpAddress(ip))
        .networkInterface();
    ec2.attachNetworkInterface(r -> r.networkInterfaceId(n.networkInterfaceId()).instanceId(host.instanceId())
        .deviceIndex(deviceIndex));
    return new String[] {n.networkInterfaceId(), n.privateIpAddress()};
  }

  List<Address> addresses() {
    return ec2.describeAddresses().addresses();
  }

  Address address(String allocationId) {
    return ec2.describeAddresses(r -> r.allocationIds(allocationId)).addresses().get(0);
  }

  static Map<String, String> tags(Address a) {
    Map<String, String> t = new TreeMap<>();
    a.tags().forEach(x -> t.put(x.key(), x.value()));
    return t;
  }

  long count(String operation) {
    synchronized (calls) {
      return calls.stream().filter(operation::equals).count();
    }
  }

  // --- Kubernetes ----------------------------------------------------------------------------------

  Node node(String name, Host host, Map<String, String> labels, boolean ready) {
    String fullName = ns + "-" + name;
    Map<String, String> l = new HashMap<>(labels);
    l.put(EipNames.MANAGE_LABEL, "true");
    Node n = kube.nodes().resource(new NodeBuilder().withNewMetadata().withName(fullName).withLabels(l).endMetadata()
        .withNewSpec().withProviderID(host == null ? null : "aws:///" + zone + "/" + host.instanceId()).endSpec()
        .build()).create();
    nodes.add(fullName);
    n.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
        .addNewAddress().withType("InternalIP").withAddress(host == null ? "10.0.9.9" : host.privateIp()).endAddress()
        .withConditions(readyCondition(ready)).build());
    return kube.nodes().resource(n).updateStatus();
  }

  String nodeName(String name) {
    return ns + "-" + name;
  }

  void setReady(String name, boolean ready) {
    Node n = kube.nodes().withName(nodeName(name)).get();
    n.getStatus().setConditions(List.of(readyCondition(ready)));
    kube.nodes().resource(n).updateStatus();
  }

  /** The node's Ready condition set as a node controller would: e.g. {@code Unknown} since a time long past. */
  void setReadyCondition(String name, String status, Instant since) {
    Node n = kube.nodes().withName(nodeName(name)).get();
    n.getStatus().setConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus(status)
        .withReason("NodeStatusUnknown").withLastTransitionTime(since.toString())
        .withLastHeartbeatTime(since.toString()).build()));
    kube.nodes().resource(n).updateStatus();
  }

  private static NodeCondition readyCondition(boolean ready) {
    return new NodeConditionBuilder().withType("Ready").withStatus(ready ? "True" : "False")
        .withReason(ready ? "KubeletReady" : "NodeStatusUnknown")
        .withLastTransitionTime(Instant.now().toString()).withLastHeartbeatTime(Instant.now().toString()).build();
  }

  String nodeLabel(String name, String key) {
    Node n = kube.nodes().withName(nodeName(name)).get();
    return n == null || n.getMetadata().getLabels() == null ? null : n.getMetadata().getLabels().get(key);
  }

  Pod pod(String name, String node, String ip, Map<String, String> labels, Map<String, String> annotations) {
    Pod p = kube.pods().resource(new PodBuilder().withNewMetadata().withName(name).withLabels(labels)
        .withAnnotations(annotations).endMetadata()
        .withNewSpec().withNodeName(node == null ? null : nodeName(node)).withAutomountServiceAccountToken(false)
        .addNewContainer().withName("c").withImage("registry.invalid/app:1").endContainer().endSpec().build())
        .create();
    if (ip != null) {
      p.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").withPodIP(ip)
          .withPodIPs(new PodIP(ip)).build());
      p = kube.pods().resource(p).updateStatus();
    }
    return p;
  }

  static Map<String, String> managed() {
    return Map.of(EipNames.MANAGE_LABEL, "true");
  }

  Pod pod(String name) {
    return kube.pods().withName(name).get();
  }

  Eip eip(String name, EipSelector selector) {
    return eip(name, EipSpec.of(selector));
  }

  Eip eip(String name, EipSpec spec) {
    Eip e = new Eip();
    e.getMetadata().setName(name);
    e.setSpec(spec);
    return kube.resource(e).create();
  }

  Eip eip(String name) {
    return kube.resources(Eip.class).withName(name).get();
  }

  /** The Eip's condition, or an empty one (so that a wait retries). */
  Condition condition(String eip, String type) {
    Eip e = eip(eip);
    if (e == null || e.getStatus() == null || e.getStatus().conditions() == null) {
      return new Condition();
    }
    return e.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).findFirst()
        .orElseGet(Condition::new);
  }

  List<String> events(String kind, String name) {
    return kube.v1().events().list().getItems().stream()
        .filter(e -> kind.equals(e.getInvolvedObject().getKind()) && name.equals(e.getInvolvedObject().getName()))
        .map(e -> e.getReason() + ": " + e.getMessage()).toList();
  }

  List<Event> allEvents() {
    return kube.v1().events().list().getItems();
  }

  void stopOperators() {
    operators.forEach(Operator::stop);
    operators.clear();
  }

  /** Stops the operators, then removes this test's Eips (finalizers stripped) and nodes. */
  @Override
  public void close() {
    stopOperators();
    for (Eip e : kube.resources(Eip.class).list().getItems()) {
      kube.resources(Eip.class).withName(e.getMetadata().getName()).edit(x -> {
        x.getMetadata().setFinalizers(List.of());
        return x;
      });
      kube.resources(Eip.class).withName(e.getMetadata().getName()).delete();
    }
    for (Pod p : kube.pods().list().getItems()) {
      if (p.getMetadata().getFinalizers() != null && !p.getMetadata().getFinalizers().isEmpty()) {
        kube.pods().withName(p.getMetadata().getName()).edit(x -> {
          x.getMetadata().setFinalizers(List.of());
          return x;
        });
      }
      kube.pods().withName(p.getMetadata().getName()).withGracePeriod(0).delete();
    }
    for (String n : nodes) {
      kube.nodes().withName(n).delete();
    }
    ec2.close();
  }

  static ElasticIp none() {
    return null;
  }
}
