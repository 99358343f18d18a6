package org.ipamoperators.cloud.aws;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/** Records the EC2 operations a client sends (one entry per call, retries not counted). */
final class CallLog implements ExecutionInterceptor {
  private final List<String> calls = Collections.synchronizedList(new ArrayList<>());

  @Override
  public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
    calls.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
  }

  List<String> calls() {
    synchronized (calls) {
      return List.copyOf(calls);
    }
  }

  long count(String operation) {
    return calls().stream().filter(operation::equals).count();
  }

  void clear() {
    calls.clear();
  }
}
