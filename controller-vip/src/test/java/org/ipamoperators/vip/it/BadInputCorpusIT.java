package org.ipamoperators.vip.it;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.testsupport.corpus.BadInputCorpus;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.CorpusRun;
import org.ipamoperators.testsupport.corpus.ReconcileFailures;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.VipControllers;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The bad-input corpus ({@code src/test/resources/bad-input/*.yaml}) applied at once, bad and good
 * IPGroups and Services together, to one running operator: each bad object gets what its
 * {@code # expect:} line says, every good Service gets its address beside them, and no reconcile
 * throws. The cases live in the files only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class BadInputCorpusIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TestFactory
  Stream<DynamicTest> everyBadObjectIsReportedAndEveryGoodOneServed(KubeApiServer server, KubernetesClient client,
      io.fabric8.kubernetes.api.model.Namespace testNamespace) throws Exception {
    List<Entry> corpus = BadInputCorpus.load("bad-input");
    ReconcileFailures failures = new ReconcileFailures();
    KubernetesClient c = server.newClient();
    Operator operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true).withMetrics(failures));
    VipControllers.register(operator, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    CorpusRun run = new CorpusRun(client, testNamespace.getMetadata().getName());
    try (VipCluster cluster = new VipCluster(client)) {
      operator.start();
      long started = System.nanoTime();
      run.apply(corpus);
      Map<Entry, String> failing = run.await(corpus, e -> served(cluster, e), WAIT);
      System.out.printf("bad-input corpus (vip): %d entries, converged in %d ms%n", corpus.size(),
          Duration.ofNanos(System.nanoTime() - started).toMillis());
      List<DynamicTest> tests = new ArrayList<>(CorpusRun.verdicts(corpus, failing, failures.byObject()));
      operator.stop();
      return tests.stream();
    } finally {
      operator.stop();
    }
  }

  /**
   * A good Service is served when its status shows an address; a bad one holds no address (an
   * IPClaim of a Service that is not served takes an address from the pool for nothing).
   */
  private static String served(VipCluster cluster, Entry e) {
    if (!"Service".equals(e.kind())) {
      return null;
    }
    List<String> ingress = cluster.ingress(e.name());
    if (e.role() == BadInputCorpus.Role.GOOD) {
      return ingress.isEmpty() ? "not served: no address in status.loadBalancer.ingress" : null;
    }
    List<String> held = cluster.claims().stream().filter(c -> c.getSpec() != null && c.getSpec().owner() != null
        && e.name().equals(c.getSpec().owner().name())).map(c -> c.getSpec().address()).toList();
    return held.isEmpty() && ingress.isEmpty() ? null : "a rejected Service holds " + held + ", shows " + ingress;
  }
}
