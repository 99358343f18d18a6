package org.ipamoperators.controller.common.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * This process's own writes of one kind of object, by key, until an informer shows them. An informer
 * lags the API server by an event, so the same table serves two ends: a pass that reads through
 * {@link #view} sees our write rather than the older object (else it would plan from it and write again:
 * a 409, or a second create), and an informer event that only brings our write back is told apart by
 * {@link #isEcho} (the pass that wrote it has planned it already, so it needs no reconcile).
 *
 * <p>A write is known by its answer's resourceVersion ({@link #wrote}), which the API server derives from
 * etcd's revision (a number that only grows), or, where the write's echo may arrive before its answer or
 * the answer is not read, by what the echo must show ({@link #expect}). Deletions hide the informer's
 * stale copy the same way. Every entry goes when the informer shows it or after {@code ttl} (an informer
 * that lags longer is resynced anyway), so memory stays bounded. java-operator-sdk 5.2.3's temporary
 * resource cache is not used because it overlays only lookups by id (not lists or indexes), keeps a write
 * only when the informer holds the very version it replaced, keeps none of our deletions, and does not skip
 * the primary resource's own-write events.
 */
public final class OwnWrites<T extends HasMetadata> {
  /** What we wrote: the object and its version, a deletion, or an expected echo. */
  private record Entry<T>(T object, String resourceVersion, long version, Predicate<? super T> shows, long at) {
    boolean deletion() {
      return object == null && shows == null;
    }
  }

  private final Map<String, Entry<T>> written = new ConcurrentHashMap<>();
  private final UnaryOperator<T> prune;
  private final boolean patchedOnly;
  private final long ttlNanos;
  private final LongSupplier clock;
  private final AtomicLong lastSweep;

  OwnWrites(UnaryOperator<T> prune, boolean patchedOnly, Duration ttl, LongSupplier clock) {
    this.prune = prune;
    this.patchedOnly = patchedOnly;
    this.ttlNanos = ttl.toNanos();
    this.clock = clock;
    this.lastSweep = new AtomicLong(clock.getAsLong());
  }

  /** Objects we create: one the informer does not have yet may be our new one. */
  public static <T extends HasMetadata> OwnWrites<T> created(UnaryOperator<T> prune, Duration ttl) {
    return new OwnWrites<>(prune, false, ttl, System::nanoTime);
  }

  /** Objects we only patch, after the informer showed them: one it no longer has was deleted. */
  public static <T extends HasMetadata> OwnWrites<T> patched(UnaryOperator<T> prune, Duration ttl) {
    return new OwnWrites<>(prune, true, ttl, System::nanoTime);
  }

  /** The API server's answer to our write of it, kept by its name. */
  public void wrote(T answer) {
    String rv = answer.getMetadata().getResourceVersion();
    put(answer.getMetadata().getName(), new Entry<>(prune.apply(answer), rv, version(rv), null, clock.getAsLong()));
  }

  /** The object was deleted at {@code version} (or it was seen with that version just before). */
  public void deleted(String key, String version) {
    put(key, new Entry<>(null, version, version(version), null, clock.getAsLong()));
  }

  /**
   * Before a write is sent whose answer will not be read (or may come after its echo): its echo is the
   * first event of {@code key} that {@code shows} accepts. Returns what to hand to {@link #failed}.
   */
  public Object expect(String key, Predicate<? super T> shows) {
    Entry<T> e = new Entry<>(null, null, 0, shows, clock.getAsLong());
    put(key, e);
    return e;
  }

  /** The write noted by {@link #expect} was refused or failed: nothing of it comes back. */
  public void failed(String key, Object noted) {
    if (noted != null) {
      written.remove(key, noted);
    }
  }

  /** Nothing written of {@code key} is to be awaited any more (it is gone, or the write is superseded). */
  public void forget(String key) {
    written.remove(key);
  }

  /**
   * Whether the informer's {@code shown} is only our write of {@code key} coming back: exactly the version
   * we wrote, or what an expected write shows. Consumed: the same write is an echo once.
   */
  public boolean isEcho(String key, T shown) {
    Entry<T> e = written.get(key);
    if (e == null || e.deletion() || expired(key, e)) {
      return false;
    }
    boolean echo = e.shows() != null ? e.shows().test(shown)
        : e.resourceVersion() != null && e.resourceVersion().equals(shown.getMetadata().getResourceVersion());
    return echo && written.remove(key, e);
  }

  /** The newer of the informer's object and our write; null when deleted. */
  public T view(String key, T cached) {
    Entry<T> e = written.get(key);
    if (e == null || e.shows() != null || expired(key, e)) {
      return cached; // none, or only an echo expected: the informer decides
    }
    if (cached != null && version(cached) > e.version()
        || cached != null && e.object() != null && version(cached) == e.version()) {
      written.remove(key, e); // the informer caught up
      return cached;
    }
    if (cached == null && (e.object() == null || patchedOnly)) {
      written.remove(key, e); // the deletion (ours, or someone else's after our patch) reached the informer
      return null;
    }
    return e.object();
  }

  /** Keys written (or deleted) that the informer may not show yet. */
  public Iterable<String> pending() {
    return written.entrySet().stream().filter(x -> x.getValue().shows() == null).map(Map.Entry::getKey).toList();
  }

  private void put(String key, Entry<T> e) {
    written.put(key, e);
    long last = lastSweep.get();
    if (e.at() - last > ttlNanos && lastSweep.compareAndSet(last, e.at())) {
      // Entries nobody reads again (an echo that never came) go too.
      written.entrySet().removeIf(x -> e.at() - x.getValue().at() > ttlNanos);
    }
  }

  private boolean expired(String key, Entry<T> e) {
    if (clock.getAsLong() - e.at() > ttlNanos) {
      written.remove(key, e);
      return true;
    }
    return false;
  }

  private static long version(HasMetadata o) {
    return version(o.getMetadata().getResourceVersion());
  }

  private static long version(String rv) {
    try {
      return rv == null ? 0 : Long.parseLong(rv);
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE; // not a number: trust the informer
    }
  }
}
