package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.eip.EipControllers;
import org.ipamoperators.testsupport.corpus.BadInputCorpus;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.CorpusRun;
import org.ipamoperators.testsupport.corpus.ReconcileFailures;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The bad-input corpus ({@code src/test/resources/bad-input/*.yaml}) applied at once, bad and good
 * Eips (v1 and v2) and pods together, to one running operator on the real API server and moto: each
 * bad object gets what its {@code # expect:} line says, every good Eip is associated beside them,
 * and no reconcile throws. The cases live in the files only; the node (an EC2 instance) and the
 * pods' addresses (ENIs) are the infrastructure every case stands on.
 */
class BadInputCorpusIT extends EipIT {

  @TestFactory
  Stream<DynamicTest> everyBadObjectIsReportedAndEveryGoodOneServed() throws Exception {
    List<Entry> corpus = BadInputCorpus.load("bad-input");
    ReconcileFailures failures = new ReconcileFailures();
    KubernetesClient client = world.kube;
    EipWorld.Host host = world.instance();
    world.node("corpus-node", host, Map.of("corpus-eip", "yes"), true);
    KubernetesClient c = server.newClient();
    Operator operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true)
        .withCacheSyncTimeout(Duration.ofSeconds(30)).withMetrics(failures));
    EipControllers.register(operator, c, world.registry, world.settings(Map.of()), world.elasticIps(moto));
    CorpusRun run = new CorpusRun(client, world.ns);
    try {
      operator.start();
      long started = System.nanoTime();
      run.apply(corpus);
      int device = 1;
      for (Entry e : corpus) {
        if ("Pod".equals(e.kind())) {
          String ip = world.podEni(host, device++)[1];
          Pod p = client.pods().withName(e.name()).get();
          p.setStatus(new PodStatusBuilder().withPhase("Running").withPodIP(ip).withPodIPs(new PodIP(ip)).build());
          client.pods().resource(p).updateStatus();
        }
      }
      Map<Entry, String> failing = run.await(corpus, e -> null, EipIT.WAIT);
      System.out.printf("bad-input corpus (eip): %d entries, converged in %d ms%n", corpus.size(),
          Duration.ofNanos(System.nanoTime() - started).toMillis());
      List<DynamicTest> tests = new ArrayList<>(CorpusRun.verdicts(corpus, failing, failures.byObject()));
      long good = corpus.stream().filter(e -> e.role() == BadInputCorpus.Role.GOOD).count();
      long addresses = world.addresses().size();
      tests.add(DynamicTest.dynamicTest("one address per good Eip, none for a bad one",
          () -> assertThat(addresses).isEqualTo(good)));
      return tests.stream();
    } finally {
      operator.stop();
    }
  }
}
