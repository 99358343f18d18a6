package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.kube.ServiceRanges;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: LoadBalancer Services that exist before the operator starts (a catch-up, as after an
 * upgrade or a restart). Every status snapshot taken while the operator catches up (all Services
 * listed every 100 ms or so) must show each address on one Service only, and at the first moment
 * all are served: N distinct addresses, N claims, each claim owned by the Service showing its
 * address. Before the fix, catch-ups published addresses the Service had not claimed, some of them
 * shown by two Services, for as long as the queue took to come back to them.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class CatchUpIT {
  private static final int SERVICES = Integer.getInteger("ipam.catchup.services", 1000);

  @Test
  void servicesCreatedBeforeTheOperatorStartsNeverShareAnAddress(KubeApiServer server, KubernetesClient client)
      throws Exception {
    VipCluster cluster = new VipCluster(client);
    try (AutoCloseable range = ServiceRanges.add(client, "vip-catch-up-it", "10.1.16.0/20")) {
      cluster.groupOf("catch-up", List.of("198.18.64.0/20"), null, null);
      ExecutorService pool = Executors.newFixedThreadPool(16);
      try {
        List<Future<Service>> created = new ArrayList<>();
        for (int i = 0; i < SERVICES; i++) {
          String name = "svc-" + i;
          created.add(pool.submit(() -> cluster.create(cluster.lb(name))));
        }
        for (Future<Service> f : created) {
          f.get();
        }
      } finally {
        pool.shutdown();
      }
      Operator operator = VipCluster.startOperator(server);
      try {
        long start = System.nanoTime();
        int snapshots = 0;
        Map<String, String> shown;
        while (true) {
          shown = snapshot(client);
          snapshots++;
          if (shown.size() == SERVICES) {
            break;
          }
          assertThat(System.nanoTime() - start).as("all %d Services served within 10 minutes", SERVICES)
              .isLessThan(600_000_000_000L);
          Thread.sleep(100);
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        // At the first moment all are served: one claim per Service, owned by it, for the address it shows.
        Map<String, String> ownerOf = new HashMap<>();
        for (IPClaim c : client.resources(IPClaim.class).list().getItems()) {
          ownerOf.put(c.getSpec().address(), c.getSpec().owner().namespace() + "/" + c.getSpec().owner().name());
        }
        String ns = client.getNamespace();
        Map<String, String> wrong = new TreeMap<>();
        shown.forEach((svc, ip) -> {
          if (!(ns + "/" + svc).equals(ownerOf.get(ip))) {
            wrong.put(svc + " shows " + ip, "claimed by " + ownerOf.get(ip));
          }
        });
        assertThat(wrong).as("Services showing an address they do not hold").isEmpty();
        assertThat(ownerOf).as("claims").hasSize(SERVICES);
        System.out.printf("catch-up of %d Services: all served after %d ms, %d snapshots checked%n", SERVICES, ms,
            snapshots);
      } finally {
        operator.stop();
      }
    } finally {
      cluster.close();
    }
  }

  /** Service name to the address it shows; fails when two Services show one address. */
  private static Map<String, String> snapshot(KubernetesClient client) {
    Map<String, String> shown = new HashMap<>();
    Map<String, String> byAddress = new HashMap<>();
    for (Service s : client.services().list().getItems()) {
      if (s.getStatus() == null || s.getStatus().getLoadBalancer() == null
          || s.getStatus().getLoadBalancer().getIngress() == null) {
        continue;
      }
      for (var i : s.getStatus().getLoadBalancer().getIngress()) {
        String other = byAddress.put(i.getIp(), s.getMetadata().getName());
        assertThat(other).as("%s is shown by %s and %s", i.getIp(), other, s.getMetadata().getName()).isNull();
        shown.put(s.getMetadata().getName(), i.getIp());
      }
    }
    return shown;
  }
}
