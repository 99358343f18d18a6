package org.ipamoperators.vip.plan;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;

/**
 * IPGroups' pools, parsed once per definition (name, ranges, exclusions; pools are immutable) rather
 * than once per plan. Whoever plans many Services keeps one; it is emptied when it grows large, so
 * edited and deleted groups do not accumulate.
 */
public final class GroupPools {
  private static final int LIMIT = 1024;
  private final Map<List<Object>, Parsed> parsed = new ConcurrentHashMap<>();

  /** A group's pool, or its problems (one message) when its ranges do not make one. */
  record Parsed(Pool pool, String problems) {}

  Parsed parse(GroupInfo g) {
    List<Object> key = List.of(g.name(), g.spec().ranges(), g.spec().excluded());
    Parsed known = parsed.get(key);
    if (known != null) {
      return known;
    }
    List<PoolProblem> p = Pool.validate(g.name(), g.spec().ranges(), g.spec().excluded());
    Parsed fresh = p.isEmpty() ? new Parsed(Pool.of(g.name(), g.spec().ranges(), g.spec().excluded()), null)
        : new Parsed(null, VipPlanner.summary(p));
    if (parsed.size() >= LIMIT) {
      parsed.clear();
    }
    parsed.put(key, fresh);
    return fresh;
  }

  /** How many definitions are held (at most {@value #LIMIT}). */
  int size() {
    return parsed.size();
  }
}
