package org.ipamoperators.cloud.azure;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import reactor.core.publisher.Mono;

/**
 * No {@code Content-Length} on a request without a body. azure-core sets {@code Content-Length: 0}
 * on every such request (every GET, every operation poll); java.net.http forbids a caller to set
 * that header, so the JDK client adapter drops it and logs a WARN each time, while java.net.http
 * frames a body-less request itself. A request with a body keeps it: the adapter sizes the body
 * from it (without it the body would go chunked).
 */
final class NoBodyNoContentLengthPolicy implements HttpPipelinePolicy {
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
    if (context.getHttpRequest().getBodyAsBinaryData() == null) {
      context.getHttpRequest().getHeaders().remove(HttpHeaderName.CONTENT_LENGTH);
    }
  }

  @Override
  public HttpPipelinePosition getPipelinePosition() {
    return HttpPipelinePosition.PER_RETRY;
  }
}
