package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Our own writes until the informer has seen them: an informer lags the API server by an event, and
 * a pass that started before the event would plan from the old object and write again (a 409, or a
 * second claim create). Each written object is kept by name until the informer shows a version at
 * least as new; deleted ones are hidden the same way. Objects are compared by resourceVersion,
 * which the API server derives from etcd's revision (a number that only grows). An entry the
 * informer never confirms is dropped after 30 s. Objects of a kind we only patch (never create) that the
 * informer no longer has were deleted by someone else since our write: they show nothing.
 */
final class RecentWrites<T extends HasMetadata> {
  private record Entry<T>(T object, long version, long at) {}
  private static final long TTL_NANOS = 30_000_000_000L; // an informer that lags longer is resynced anyway

  private final Map<String, Entry<T>> written = new ConcurrentHashMap<>();
  private final UnaryOperator<T> prune;
  private final boolean patchedOnly;

  private RecentWrites(UnaryOperator<T> prune, boolean patchedOnly) {
    this.prune = prune;
    this.patchedOnly = patchedOnly;
  }

  /** Objects we create: one the informer does not have yet may be our new one. */
  static <T extends HasMetadata> RecentWrites<T> created(UnaryOperator<T> prune) {
    return new RecentWrites<>(prune, false);
  }

  /** Objects we only patch, after the informer showed them: one it no longer has was deleted. */
  static <T extends HasMetadata> RecentWrites<T> patched(UnaryOperator<T> prune) {
    return new RecentWrites<>(prune, true);
  }

  void wrote(T object) {
    written.put(object.getMetadata().getName(), new Entry<>(prune.apply(object), version(object), System.nanoTime()));
  }

  /** The object was deleted at {@code version} (or it was seen with that version just before). */
  void deleted(String name, String version) {
    written.put(name, new Entry<>(null, version(version), System.nanoTime()));
  }

  /** The newer of the informer's object and our write; null when deleted. */
  T view(String name, T cached) {
    Entry<T> e = written.get(name);
    if (e == null) {
      return cached;
    }
    if (System.nanoTime() - e.at() > TTL_NANOS) {
      written.remove(name, e); // never seen (deleted by someone else meanwhile?): the informer decides
      return cached;
    }
    if (cached != null && version(cached) > e.version()
        || cached != null && e.object() != null && version(cached) == e.version()) {
      written.remove(name, e); // the informer caught up
      return cached;
    }
    if (cached == null && (e.object() == null || patchedOnly)) {
      written.remove(name, e); // the deletion (ours, or someone else's after our patch) reached the informer
      return null;
    }
    return e.object();
  }

  /** Names written (or deleted) that the informer may not show yet. */
  Iterable<String> pending() {
    return written.keySet();
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
