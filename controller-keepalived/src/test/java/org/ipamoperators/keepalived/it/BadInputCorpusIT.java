package org.ipamoperators.keepalived.it;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.testsupport.corpus.BadInputCorpus;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.CorpusRun;
import org.ipamoperators.testsupport.corpus.ReconcileFailures;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The bad-input corpus ({@code src/test/resources/bad-input/*.yaml}) applied at once, bad and good
 * KeepalivedGroups and Services together, to one running operator: each bad object gets what its
 * {@code # expect:} line says, every good Service's VIPs are in its group's configuration beside
 * them, no reconcile throws, and every configuration written passes the real
 * {@code keepalived --config-test}. The cases live in the files only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class BadInputCorpusIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TestFactory
  Stream<DynamicTest> everyBadObjectIsReportedAndEveryGoodOneServed(KubeApiServer server, KubernetesClient client,
      io.fabric8.kubernetes.api.model.Namespace testNamespace) throws Exception {
    List<Entry> corpus = BadInputCorpus.load("bad-input");
    ReconcileFailures failures = new ReconcileFailures();
    KubernetesClient c = server.newClient();
    Operator operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true).withMetrics(failures));
    KeepalivedControllers.register(operator, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
        KeepalivedCluster.SETTINGS);
    CorpusRun run = new CorpusRun(client, testNamespace.getMetadata().getName());
    List<String> nodes = new ArrayList<>();
    try (KeepalivedCluster cluster = new KeepalivedCluster(client)) {
      operator.start();
      long started = System.nanoTime();
      run.apply(corpus);
      corpus.stream().filter(e -> "Node".equals(e.kind())).forEach(e -> nodes.add(e.name()));
      Map<Entry, String> failing = run.await(corpus, e -> served(cluster, e), WAIT);
      System.out.printf("bad-input corpus (keepalived): %d entries, converged in %d ms%n", corpus.size(),
          Duration.ofNanos(System.nanoTime() - started).toMillis());
      List<DynamicTest> tests = new ArrayList<>(CorpusRun.verdicts(corpus, failing, failures.byObject()));
      tests.add(DynamicTest.dynamicTest("every configuration written passes keepalived --config-test",
          KeepalivedCluster::checkEverySeenConfiguration));
      operator.stop();
      return tests.stream();
    } finally {
      operator.stop();
      nodes.forEach(n -> client.nodes().withName(n).delete());
    }
  }

  /** A good Service is served when each of its external IPs is in its group's configuration. */
  private static String served(KeepalivedCluster cluster, Entry e) {
    if (!"Service".equals(e.kind()) || e.role() != BadInputCorpus.Role.GOOD) {
      return null;
    }
    Service s = cluster.client.services().withName(e.name()).get();
    String group = s.getMetadata().getAnnotations().get(KeepalivedAnnotations.GROUP);
    String conf = String.join("\n", cluster.configs(group.substring(group.indexOf('/') + 1)).values());
    List<String> missing = s.getSpec().getExternalIPs().stream().filter(ip -> !conf.contains(ip)).toList();
    return missing.isEmpty() ? null : "not announced: " + missing + " not in the group's configuration";
  }
}
