package org.ipamoperators.vip.it;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.IPClaim;

/**
 * Every change to the test namespace's Services and to the IPClaims, as the API server ordered them:
 * one etcd, so each event's resourceVersion is the global revision of that change and both watches
 * can be merged into one history. {@link #violations} replays it and reports every moment a Service
 * showed an address whose claim was not its own (gone, or another owner's): the window in which a
 * second Service (or a second replica) could take an address the first still announces.
 */
final class LedgerTimeline implements AutoCloseable {
  private record Change(long revision, String kind, Watcher.Action action, HasMetadata object) {}

  private final List<Change> changes = new ArrayList<>();
  private final List<Watch> watches = new ArrayList<>();

  LedgerTimeline(KubernetesClient client) {
    // A list, then a watch from its revision: every object as it was, then every change after.
    var services = client.services().list();
    Recorder<Service> s = new Recorder<>("Service");
    services.getItems().forEach(x -> s.eventReceived(Watcher.Action.ADDED, x));
    watches.add(client.services().withResourceVersion(services.getMetadata().getResourceVersion()).watch(s));
    var claims = client.resources(IPClaim.class).list();
    Recorder<IPClaim> c = new Recorder<>("IPClaim");
    claims.getItems().forEach(x -> c.eventReceived(Watcher.Action.ADDED, x));
    watches.add(client.resources(IPClaim.class).withResourceVersion(claims.getMetadata().getResourceVersion()).watch(c));
  }

  /** Whether the history holds a delete of that object (so a check over it cannot pass for lack of events). */
  boolean sawDeleted(String kind, String name) {
    synchronized (changes) {
      return changes.stream().anyMatch(x -> x.kind().equals(kind) && x.action() == Watcher.Action.DELETED
          && x.object().getMetadata().getName().equals(name));
    }
  }

  private final class Recorder<T extends HasMetadata> implements Watcher<T> {
    private final String kind;

    Recorder(String kind) {
      this.kind = kind;
    }

    @Override
    public void eventReceived(Action action, T resource) {
      if (action == Action.BOOKMARK || action == Action.ERROR) {
        return;
      }
      synchronized (changes) {
        changes.add(new Change(Long.parseLong(resource.getMetadata().getResourceVersion()), kind, action, resource));
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      // the test ends it
    }
  }

  /** Each moment (revision) a Service showed an address not claimed by it (name and uid). */
  List<String> violations() {
    List<Change> all;
    synchronized (changes) {
      all = new ArrayList<>(changes);
    }
    all.sort(Comparator.comparingLong(Change::revision));
    Map<String, Service> services = new HashMap<>(); // by name
    Map<String, IPClaim> claims = new HashMap<>(); // by address
    List<String> out = new ArrayList<>();
    for (Change c : all) {
      if (c.kind().equals("Service")) {
        Service s = (Service) c.object();
        if (c.action() == Watcher.Action.DELETED) {
          services.remove(s.getMetadata().getName());
        } else {
          services.put(s.getMetadata().getName(), s);
        }
      } else {
        IPClaim claim = (IPClaim) c.object();
        if (c.action() == Watcher.Action.DELETED) {
          claims.remove(claim.getSpec().address());
        } else {
          claims.put(claim.getSpec().address(), claim);
        }
      }
      for (Service s : services.values()) {
        for (String ip : shown(s)) {
          IPClaim claim = claims.get(ip);
          if (claim == null || !s.getMetadata().getName().equals(claim.getSpec().owner().name())
              || !s.getMetadata().getUid().equals(claim.getSpec().owner().uid())) {
            out.add("at revision " + c.revision() + " (" + c.kind() + " " + c.action() + ") Service "
                + s.getMetadata().getName() + " shows " + ip + " claimed by "
                + (claim == null ? "nobody" : claim.getSpec().owner().describe() + " uid " + claim.getSpec().owner().uid()));
          }
        }
      }
    }
    return out;
  }

  int size() {
    synchronized (changes) {
      return changes.size();
    }
  }

  private static List<String> shown(Service s) {
    if (s.getStatus() == null || s.getStatus().getLoadBalancer() == null
        || s.getStatus().getLoadBalancer().getIngress() == null) {
      return List.of();
    }
    return s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp).toList();
  }

  @Override
  public void close() {
    watches.forEach(Watch::close);
  }
}
