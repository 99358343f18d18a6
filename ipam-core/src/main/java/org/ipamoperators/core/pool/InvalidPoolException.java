package org.ipamoperators.core.pool;

import java.util.List;
import java.util.stream.Collectors;

/** A pool definition that cannot be used, with every problem found (not just the first). */
public final class InvalidPoolException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final transient List<PoolProblem> problems;

  public InvalidPoolException(String poolName, List<PoolProblem> problems) {
    super("pool '" + poolName + "' is invalid: "
        + problems.stream().map(PoolProblem::message).collect(Collectors.joining("; ")));
    this.problems = List.copyOf(problems);
  }

  public List<PoolProblem> problems() {
    return problems;
  }
}
