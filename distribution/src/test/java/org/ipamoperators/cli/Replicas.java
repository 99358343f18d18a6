package org.ipamoperators.cli;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.testsupport.LoopbackPorts;

/**
 * Operator processes of one test, scoped to its namespace (the Lease lives there, so the shared apiserver's other
 * tests' replicas are not in the race), and the Lease's holder as the test's client sees it. {@link #close()} SIGKILLs
 * every process it started.
 */
final class Replicas implements AutoCloseable {
  private final List<Process> started = new CopyOnWriteArrayList<>();
  private final Map<Process, Integer> ports = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * {@code ipam operator --controllers <controllers>} on {@code kubeconfig} in namespace {@code ns}: with an
   * {@code identity}, a replica under leader election with short terms; with none, alone without election. Output
   * goes to {@code <dir>/<logName>.out/.err}.
   */
  Process start(Path dir, Path kubeconfig, String ns, String controllers, String identity, String logName)
      throws Exception {
    return start(dir, kubeconfig, ns, controllers, identity, logName, List.of());
  }

  /** As above, with more options for the operator. */
  Process start(Path dir, Path kubeconfig, String ns, String controllers, String identity, String logName,
      List<String> options) throws Exception {
    int port = LoopbackPorts.freePort();
    List<String> args = new ArrayList<>(List.of("operator", "--controllers", controllers, "--kubeconfig",
        kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address",
        "127.0.0.1", "--namespace", ns));
    args.addAll(identity == null ? List.of("--no-leader-election") : OperatorProcess.replica(identity));
    args.addAll(options);
    Process p = OperatorProcess.start(dir, logName, args, Map.of());
    started.add(p);
    ports.put(p, port);
    return p;
  }

  /**
   * Waits (at most 120 s) until the process answers {@code /readyz} with 200 and a body starting with
   * {@code body} ("ok" alone; "ok: leader" under election): started, every informer synced and watching. Fails at
   * once if it exits. Returns how long it waited.
   */
  Duration awaitReady(Process p, String body) {
    int port = ports.get(p);
    long start = System.nanoTime();
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
        .failFast("the operator exited (exit status and output in the run's directory)", () -> !p.isAlive())
        .until(() -> {
          OperatorRun.Response r = OperatorRun.get(port, "/readyz");
          return r.status() == 200 && r.body().startsWith(body);
        });
    return Duration.ofNanos(System.nanoTime() - start);
  }

  /** Whether the process answers {@code /readyz} now with 200 and a body starting with {@code body}. */
  boolean ready(Process p, String body) {
    try {
      OperatorRun.Response r = OperatorRun.get(ports.get(p), "/readyz");
      return r.status() == 200 && r.body().startsWith(body);
    } catch (Exception e) {
      return false;
    }
  }

  /**
   * Waits (at most 120 s) until one of {@code running} (identity to process) says {@code ok: leader} on
   * {@code /readyz} (leading, caches synced), and names it. The Lease alone is not enough: a killed leader's
   * identity holds it until it expires, and a restarted process of that identity may not win it back.
   */
  String awaitReadyLeader(Map<String, Process> running) {
    String[] seen = {null};
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(50)).until(() -> {
      for (Map.Entry<String, Process> e : running.entrySet()) {
        if (ready(e.getValue(), "ok: leader")) {
          seen[0] = e.getKey();
          return true;
        }
      }
      return false;
    });
    return seen[0];
  }

  /** SIGKILLs every process started so far (each waited for at most 30 s). */
  @Override
  public void close() throws InterruptedException {
    for (Process p : started) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    started.clear();
  }

  /** Who holds the operator's Lease in the client's namespace now, or null. */
  static String holder(KubernetesClient client) {
    Lease lease = client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  /** Waits (at most 90 s) until {@code identity} holds the Lease. */
  static void awaitLeader(KubernetesClient client, String identity) {
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
        .until(() -> identity.equals(holder(client)));
  }

  /** Waits (at most 90 s) until one of {@code identities} holds the Lease, and names it. */
  static String awaitLeaderAmong(KubernetesClient client, Set<String> identities) {
    String[] seen = {null};
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      seen[0] = holder(client);
      return seen[0] != null && identities.contains(seen[0]);
    });
    return seen[0];
  }
}
