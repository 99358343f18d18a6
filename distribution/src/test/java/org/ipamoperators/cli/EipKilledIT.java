package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * {@code ipam operator --controllers eip} as its own process, SIGKILLed after EC2 allocated an Eip's address and
 * before the operator could record it (a proxy in front of moto lets AllocateAddress through and holds its answer
 * back until the kill). The next process finds the address by the Eip's UID tag: no second address, and deleting
 * the Eip leaves none behind.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
class EipKilledIT {
  private final List<Process> processes = new ArrayList<>();
  private HttpServer proxy;

  @AfterEach
  void stop(KubernetesClient client) throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    if (proxy != null) {
      proxy.stop(0);
    }
    client.resources(Eip.class).list().getItems().forEach(e -> client.resources(Eip.class)
        .withName(e.getMetadata().getName()).edit(x -> {
          x.getMetadata().setFinalizers(List.of());
          return x;
        }));
  }

  /** Forwards to moto; answers AllocateAddress only... never: the operator is killed while waiting. */
  private URI holdingProxy(URI moto, CountDownLatch allocated) throws IOException {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    proxy = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    proxy.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    proxy.createContext("/", (HttpExchange x) -> {
      byte[] body = x.getRequestBody().readAllBytes();
      HttpRequest.Builder r = HttpRequest.newBuilder(moto.resolve(x.getRequestURI().toString()))
          .method(x.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
      x.getRequestHeaders().forEach((k, v) -> {
        if (!List.of("host", "connection", "content-length", "expect", "upgrade", "transfer-encoding")
            .contains(k.toLowerCase())) {
          v.forEach(value -> r.header(k, value));
        }
      });
      try {
        HttpResponse<byte[]> answer = http.send(r.build(), HttpResponse.BodyHandlers.ofByteArray());
        if (new String(body, StandardCharsets.UTF_8).contains("Action=AllocateAddress")) {
          allocated.countDown();
          Thread.sleep(Long.MAX_VALUE); // the answer never reaches the operator
        }
        x.sendResponseHeaders(answer.statusCode(), answer.body().length);
        x.getResponseBody().write(answer.body());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        x.close();
      }
    });
    proxy.start();
    return URI.create("http://127.0.0.1:" + proxy.getAddress().getPort());
  }

  private Process operator(Path dir, Path kubeconfig, String ns, URI ec2, String name) throws Exception {
    Process p = EipOperatorProcess.start(dir, kubeconfig, ns, ec2, name, "killed");
    processes.add(p);
    return p;
  }

  @Test
  void aKillBetweenAllocateAddressAndTheStatusWriteLeavesOneAddressAndNoLeak(KubeApiServer server,
      KubernetesClient client, MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    Eip e = new Eip();
    e.getMetadata().setName("static");
    e.setSpec(EipSpec.of(EipSelector.pod("db-0")));
    String uid = client.resource(e).create().getMetadata().getUid();

    CountDownLatch allocated = new CountDownLatch(1);
    Process first = operator(dir, kubeconfig, client.getNamespace(), holdingProxy(moto.endpoint(), allocated),
        "first");
    assertThat(allocated.await(120, TimeUnit.SECONDS)).as("AllocateAddress reached EC2").isTrue();
    first.destroyForcibly(); // SIGKILL while the answer is held back
    assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
    List<Address> afterKill = ec2.describeAddresses().addresses();
    assertThat(afterKill).singleElement().satisfies(a -> assertThat(a.tags())
        .anyMatch(t -> t.key().equals(EipNames.TAG_UID) && t.value().equals(uid)));
    Eip recorded = client.resources(Eip.class).withName("static").get();
    assertThat(recorded.getStatus() == null || recorded.getStatus().allocationId() == null)
        .as("the first operator never wrote the address").isTrue();

    operator(dir, kubeconfig, client.getNamespace(), moto.endpoint(), "second");
    String allocationId = afterKill.get(0).allocationId();
    await().atMost(Duration.ofSeconds(120)).until(() -> {
      Eip now = client.resources(Eip.class).withName("static").get();
      return now.getStatus() != null && allocationId.equals(now.getStatus().allocationId());
    });
    assertThat(ec2.describeAddresses().addresses()).extracting(Address::allocationId).containsExactly(allocationId);

    client.resources(Eip.class).withName("static").delete();
    await().atMost(Duration.ofSeconds(60)).until(() -> client.resources(Eip.class).withName("static").get() == null);
    assertThat(ec2.describeAddresses().addresses()).as("none leaked").isEmpty();
  }
}
