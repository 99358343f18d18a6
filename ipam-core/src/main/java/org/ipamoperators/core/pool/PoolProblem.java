package org.ipamoperators.core.pool;

/** One thing wrong with a pool definition: the value at fault and what to do about it. */
public record PoolProblem(String value, String message) {
  @Override
  public String toString() {
    return message;
  }
}
