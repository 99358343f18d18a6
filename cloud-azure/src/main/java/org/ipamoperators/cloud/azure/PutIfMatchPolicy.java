package org.ipamoperators.cloud.azure;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpMethod;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.util.Context;
import reactor.core.publisher.Mono;

/**
 * {@code If-Match} on the PUT of a call, and on nothing else of it. The SDK hands a call's context
 * to every request of its long-running operation (the operation polls, the final GET of the
 * resource); headers put in the context for the SDK's own {@code AddHeadersFromContextPolicy}
 * would go on all of them, the final GET with an etag the PUT has already made stale.
 */
final class PutIfMatchPolicy implements HttpPipelinePolicy {
  private static final String KEY = "org.ipamoperators.cloud.azure.put-if-match";

  /** The context for a PUT that must find the resource at {@code etag} (none when null). */
  static Context context(String etag) {
    return etag == null ? Context.NONE : new Context(KEY, etag);
  }

  @Override
  public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
    apply(context);
    return next.process();
  }

  @Override
  public HttpResponse processSync(HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
    apply(context);
    return next.processSync();
  }

  private static void apply(HttpPipelineCallContext context) {
    if (context.getHttpRequest().getHttpMethod() == HttpMethod.PUT) {
      context.getData(KEY).ifPresent(etag -> context.getHttpRequest().setHeader(HttpHeaderName.IF_MATCH,
          etag.toString()));
    }
  }

  @Override
  public HttpPipelinePosition getPipelinePosition() {
    return HttpPipelinePosition.PER_CALL;
  }
}
