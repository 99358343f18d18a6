package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.plan.ShareMember;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases the claims of Services that no longer exist, which the delete events did not release:
 * Services deleted while no operator ran (or while this one was not the leader), a delete event
 * lost with a crash. Runs on the leader only (started when the replica takes the lead, or by the first
 * reconcile, which only the leader gets: none comes when every Service is gone), once at start and then every
 * {@link VipSettings#sweepInterval()} (5 minutes by default).
 *
 * <p>An owner missing from the informer's cache is not taken to be gone: the cache of a fresh
 * leader may not show a Service another replica served a moment ago. Before its claim goes, a GET
 * (name and uid) confirms that the Service is gone, or is another Service by now (re-created under
 * the same name). A Service that exists but is no longer a LoadBalancer of ours (changed while no
 * operator ran) is handed to its reconcile (an event of this source), which unpublishes, then releases.
 */
final class OrphanSweep extends AbstractEventSource<Void, Service> {
  private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

  /** Releases a Service's own claim on an address, conditionally on its uid; true when deleted. */
  interface Releaser {
    boolean release(Ip ip, ClaimOwner owner);
  }

  private final KubernetesClient client;
  private final ClaimIndex index;
  private final Set<String> namespaces;
  private final Releaser releaser;
  private final BiPredicate<Ip, ShareMember> leaver;
  private final Runnable awaitIndex;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Duration every;
  private final VipSettings settings;
  private volatile IndexerResourceCache<Service> services;
  private ScheduledExecutorService timer;
  private final org.ipamoperators.controller.common.kube.RetryBackoff releaseRetries =
      new org.ipamoperators.controller.common.kube.RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));

  OrphanSweep(KubernetesClient client, ClaimIndex index, Set<String> namespaces, Releaser releaser,
      BiPredicate<Ip, ShareMember> leaver, Runnable awaitIndex, VipSettings settings) {
    super(Void.class, "vip-orphan-sweep");
    this.client = client;
    this.index = index;
    this.namespaces = namespaces;
    this.releaser = releaser;
    this.leaver = leaver;
    this.awaitIndex = awaitIndex;
    this.settings = settings;
    this.every = settings.sweepInterval();
  }

  void servicesCache(IndexerResourceCache<Service> cache) {
    this.services = cache;
  }

  /** Starts sweeping (now, then every interval), once; called on the leader only. */
  void startOnce() {
    if (!started.compareAndSet(false, true)) {
      return;
    }
    timer().scheduleWithFixedDelay(() -> {
      try {
        int n = sweep();
        if (n > 0) {
          LOG.info("orphan sweep: released {} claims of Services that are gone", n);
        }
      } catch (RuntimeException e) {
        LOG.warn("orphan sweep failed, next one in {}: {}", every, e.toString());
      }
    }, 0, every.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The release of a deleted Service whose delete event could not do it (a write refused or failed):
   * tried again on the sweep's thread, 2 s doubling to 30 s, until it goes through. Not left to
   * java-operator-sdk's retry: that gives up after a few attempts, and a deleted primary's failed
   * reconcile that saw another event meanwhile is not retried at all (its delete mark is lost).
   */
  void retryRelease(Service gone, Runnable release) {
    String uid = gone.getMetadata().getUid();
    Duration delay = releaseRetries.next(uid);
    LOG.warn("Service {}/{} is gone but what it held could not all be released; trying again in {} s",
        gone.getMetadata().getNamespace(), gone.getMetadata().getName(), delay.toSeconds());
    timer().schedule(() -> {
      try {
        release.run();
        releaseRetries.reset(uid);
        LOG.info("released what deleted Service {}/{} held", gone.getMetadata().getNamespace(),
            gone.getMetadata().getName());
      } catch (RuntimeException e) {
        LOG.debug("release of deleted Service {} failed again: {}", uid, e.toString());
        retryRelease(gone, release);
      }
    }, delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  private synchronized ScheduledExecutorService timer() {
    if (timer == null) {
      timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread th = new Thread(r, "vip-orphan-sweep");
        th.setDaemon(true);
        return th;
      });
    }
    return timer;
  }

  /** One pass over the claims of Services; returns how many claims (or memberships) it released. */
  int sweep() {
    awaitIndex.run();
    LOG.debug("orphan sweep over {} claims", index.claims().size());
    int released = 0;
    for (IPClaim c : index.claims()) {
      Ip ip = ClaimIndex.address(c);
      ClaimOwner o = c.getSpec().owner();
      if (ip == null || !ServiceVipReconciler.CONTROLLER.equals(o.controller())) {
        continue;
      }
      if ("Service".equals(o.kind())) {
        if (served(o.namespace()) && !exists(o.namespace(), o.name(), o.uid()) && releaser.release(ip, o)) {
          released++;
        }
      } else if (SharedClaims.isShared(o)) {
        for (ShareMember m : SharedClaims.members(c)) {
          int slash = m.service().indexOf('/');
          if (slash > 0 && served(m.service().substring(0, slash))
              && !exists(m.service().substring(0, slash), m.service().substring(slash + 1), m.uid())
              && leaver.test(ip, m)) {
            released++;
          }
        }
      }
    }
    return released;
  }

  private boolean served(String namespace) {
    return namespaces.isEmpty() || namespaces.contains(namespace);
  }

  /**
   * Whether the Service (of that uid, when recorded) exists: the cache first; when it does not show
   * it, or shows another uid, the API server decides.
   */
  private boolean exists(String namespace, String name, String uid) {
    ResourceID id = new ResourceID(name, namespace);
    IndexerResourceCache<Service> cache = services;
    Optional<Service> cached = cache == null ? Optional.empty() : cache.get(id);
    if (cached.isPresent() && (uid == null || uid.equals(cached.get().getMetadata().getUid()))) {
      if (!settings.handles(cached.get())) {
        LOG.info("orphan sweep: Service {}/{} holds a claim but is no longer ours to serve: reconciling it",
            namespace, name);
        // Its reconcile unpublishes, then releases. A resource event: java-operator-sdk drops a plain
        // event for a resource it never had an event for (its filters kept this Service out).
        getEventHandler().handleEvent(new ResourceEvent(ResourceAction.UPDATED, id, cached.get()));
      }
      return true;
    }
    Service live = client.services().inNamespace(namespace).withName(name).get();
    return live != null && (uid == null || uid.equals(live.getMetadata().getUid()));
  }

  @Override
  public Set<Void> getSecondaryResources(Service primary) {
    return Set.of();
  }

  @Override
  public void stop() {
    synchronized (this) {
      if (timer != null) {
        timer.shutdownNow();
      }
    }
    super.stop();
  }
}
