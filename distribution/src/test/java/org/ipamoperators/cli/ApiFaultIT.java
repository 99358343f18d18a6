package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.ApiFaultProxy.Fault;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The egressip and vip controllers in one operator whose every API call goes through a proxy that
 * throttles, fails, refuses writes with 409, slows down, resets connections and cuts watches, drawn
 * from a seed ({@code -Dipam.reliability.seed}), while a burst of namespaces and Services arrives.
 * Nothing may be shown on two owners at any moment; with the faults still on, everything is served;
 * the audit then finds nothing for the run's addresses.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"})
class ApiFaultIT {
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final double RATE = Double.parseDouble(System.getProperty("ipam.reliability.faultRate", "0.05"));

  @Test
  void servesEverythingThroughInjectedApiFaultsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("paas.org/v1");
    g.setKind("IPGroup");
    g.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("fault-vips").build());
    g.setAdditionalProperty("spec", Map.of("segment", "198.18.12.0/24"));
    client.resource(g).create();
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("fault-w1")
        .addToLabels("fault-zone", "a").endMetadata().build()).create();
    EgressIPAM ipam = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName("fault");
    ipam.setMetadata(meta);
    ipam.setSpec(new EgressIPAMSpec(List.of(new CIDRAssignment("198.18.13.0/24", "a", null)), "fault-zone",
        new LabelSelectorBuilder().build(), null, null, null));
    client.resource(ipam).create();
    int services = 60;
    int namespaces = 40;
    System.out.printf("[api-faults] seed %d rate %.2f%n", SEED, RATE);
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, SEED)) {
      for (Fault f : List.of(Fault.THROTTLE, Fault.SERVER_ERROR, Fault.CONFLICT, Fault.SLOW, Fault.RESET)) {
        proxy.rate(f, RATE);
      }
      proxy.rate(Fault.WATCH_CUT, 0.5);
      Path kubeconfig = OperatorRun.writeKubeconfig(dir, proxy.kubeconfig());
      int port = LoopbackPorts.freePort();
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "egressip,vip", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        // No wait for readiness: informers start through the faults (watch cuts make the event sources flap,
        // which /readyz reports), and the burst below arrives as they sync, a catch-up under faults.
        SnapshotCheck snapshots = new SnapshotCheck();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
          while (watching.get()) {
            try {
              snapshots.check(shown(client, ns));
              Thread.sleep(150);
            } catch (InterruptedException e) {
              return;
            } catch (RuntimeException e) {
              // next snapshot
            }
          }
        });
        watcher.start();
        ExecutorService creators = Executors.newFixedThreadPool(4);
        for (int i = 0; i < services; i++) {
          int n = i;
          creators.submit(() -> client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata()
              .withName("fault-" + n).endMetadata().withNewSpec().withType("LoadBalancer")
              .withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80).withProtocol("TCP").endPort()
              .endSpec().build()).create());
        }
        for (int i = 0; i < namespaces; i++) {
          int n = i;
          creators.submit(() -> client.namespaces().resource(new NamespaceBuilder().withNewMetadata()
              .withName("fault-ns" + n).addToLabels("burst", "fault")
              .addToAnnotations(EgressAnnotations.EGRESSIPAM, "fault").endMetadata().build()).create());
        }
        creators.shutdown();
        assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
        Instant start = Instant.now();
        // Served with the faults still on: retries and re-lists must get there by themselves.
        await().atMost(Duration.ofSeconds(300)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
            .until(() -> shown(client, ns).size() == services + namespaces);
        Duration converged = Duration.between(start, Instant.now());
        watching.set(false);
        watcher.join(5_000);
        snapshots.check(shown(client, ns));
        proxy.inject(false);
        List<Finding> findings = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
          ClusterFacts facts = ClusterFacts.read(client, Set.of("egressip", "vip"));
          findings.clear();
          LedgerAudit.audit(facts.entries(), facts.publications(), new AuditOptions(Instant.now(), Duration.ZERO))
              .findings().stream().filter(f -> f.resource().value().startsWith("198.18.12.")
                  || f.resource().value().startsWith("198.18.13.")).forEach(findings::add);
          return findings.isEmpty();
        });
        String summary = String.format("seed %d, faults injected %s, requests forwarded %d, converged in %s",
            SEED, proxy.injected(), proxy.forwarded(), converged);
        System.out.println("[api-faults] " + summary);
        assertThat(snapshots.duplicates()).as(summary).isEmpty();
        assertThat(snapshots.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        assertThat(proxy.injected().values().stream().mapToLong(Long::longValue).sum())
            .as("faults were injected").isPositive();
      }
    } finally {
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName("fault-vips").delete();
      client.resources(EgressIPAM.class).withName("fault").delete();
      client.nodes().withName("fault-w1").delete();
      ReliabilityCleanup.namespaces(client, "burst", "fault");
    }
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns) {
    Map<String, List<String>> out = new HashMap<>();
    for (Service s : client.services().inNamespace(ns).list().getItems()) {
      if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null && !s.getStatus().getLoadBalancer().getIngress().isEmpty()) {
        out.put("svc/" + s.getMetadata().getName(), s.getStatus().getLoadBalancer().getIngress().stream()
            .map(LoadBalancerIngress::getIp).toList());
      }
    }
    for (Namespace n : client.namespaces().withLabel("burst", "fault").list().getItems()) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
      if (ips != null && !ips.isBlank()) {
        out.put("ns/" + n.getMetadata().getName(), List.of(ips.split(",")));
      }
    }
    return out;
  }
}
