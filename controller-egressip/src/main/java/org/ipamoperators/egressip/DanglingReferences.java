package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Namespace;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.egressip.api.EgressAnnotations;

/**
 * Tells a namespace that its egressipam annotation names no EgressIPAM (reference scenario 45):
 * the IPAM controller never runs for a missing IPAM, so without this the namespace would wait in
 * silence. Fed by the EgressIPAM controller's own namespace informer (a second informer of every
 * namespace would decode each namespace event twice); looks 5 s after a namespace is seen naming
 * an unknown IPAM (the IPAM cache may still be filling at start), then every 5 minutes while the
 * name stays unknown, in case it was a typo about to be fixed elsewhere.
 */
final class DanglingReferences {
  private static final Duration FIRST_LOOK = Duration.ofSeconds(5);
  private static final Duration AGAIN = Duration.ofMinutes(5);

  private final EventRecorder events;
  private final Function<String, Namespace> namespaces;
  private final Predicate<String> ipamExists;
  private final Map<String, Boolean> waiting = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "egressip-references");
    t.setDaemon(true);
    return t;
  });

  DanglingReferences(EventRecorder events, Function<String, Namespace> namespaces, Predicate<String> ipamExists) {
    this.events = events;
    this.namespaces = namespaces;
    this.ipamExists = ipamExists;
  }

  /** A namespace names {@code ipam}, which the IPAM cache does not hold (now). */
  void seen(String namespace, String ipam) {
    if (!ipamExists.test(ipam) && waiting.putIfAbsent(namespace, Boolean.TRUE) == null) {
      timer.schedule(() -> look(namespace), FIRST_LOOK.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void look(String namespace) {
    try {
      Namespace ns = namespaces.apply(namespace);
      Map<String, String> a = ns == null ? null : ns.getMetadata().getAnnotations();
      String ipam = a == null ? null : a.get(EgressAnnotations.EGRESSIPAM);
      if (ipam == null || ns.getMetadata().getDeletionTimestamp() != null || ipamExists.test(ipam)) {
        waiting.remove(namespace);
        return;
      }
      events.warning(ns, "EgressIPAMNotFound", "annotation " + EgressAnnotations.EGRESSIPAM + " names EgressIPAM '"
          + ipam + "', which does not exist; no egress IP is assigned until it does");
      timer.schedule(() -> look(namespace), AGAIN.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      waiting.remove(namespace); // seen again at its next event or resync
    }
  }
}
