package org.ipamoperators.core.pool;

import java.util.List;
import java.util.stream.Collectors;

/** A pool definition that cannot be used, with every problem found (not just the first). */
public final class InvalidPoolException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final transient List<PoolProblem> problems;

  /**
   * Creates the exception; the message lists every problem.
   *
   * @param poolName the pool's name
   * @param problems the problems found
   */
  public InvalidPoolException(String poolName, List<PoolProblem> problems) {
    super("pool '" + poolName + "' is invalid: "
        + problems.stream().map(PoolProblem::message).collect(Collectors.joining("; ")));
    this.problems = List.copyOf(problems);
  }

  /**
   * Every problem found, in the order found.
   *
   * @return the problems; not modifiable
   */
  public List<PoolProblem> problems() {
    return problems;
  }
}
