package org.ipamoperators.controller.common.ledger;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.URLUtils;
import java.util.concurrent.ExecutionException;

/**
 * The one way the ledgers delete: a cluster-scoped object is deleted only if it is still the very
 * object that was read, the DELETE carrying that object's uid and resourceVersion as preconditions.
 * A claim deleted and created again by someone else (a new uid), or changed since it was read (a new
 * resourceVersion), is left in place. fabric8's {@code lockResourceVersion} sends the resourceVersion
 * alone, so the request is written here.
 */
public final class ConditionedDelete {
  private ConditionedDelete() {}

  /**
   * Deletes {@code seen} if it is unchanged. True when this call deleted it; false when it was
   * already gone (404) or is no longer that object (409: another uid or resourceVersion).
   *
   * @throws IllegalArgumentException when {@code seen} lacks its uid or resourceVersion (never unconditioned)
   * @throws KubernetesClientException for any other answer of the API server
   */
  public static boolean delete(KubernetesClient client, HasMetadata seen) {
    String name = seen.getMetadata() == null ? null : seen.getMetadata().getName();
    String uid = seen.getMetadata() == null ? null : seen.getMetadata().getUid();
    String rv = seen.getMetadata() == null ? null : seen.getMetadata().getResourceVersion();
    if (name == null || uid == null || rv == null) {
      throw new IllegalArgumentException("a ledger delete needs the name, uid and resourceVersion read: " + name);
    }
    Class<? extends HasMetadata> type = seen.getClass();
    String url = URLUtils.join(client.getMasterUrl().toString(), "apis", HasMetadata.getGroup(type),
        HasMetadata.getVersion(type), HasMetadata.getPlural(type), name);
    HttpResponse<String> answer = send(client, url, new Preconditions(rv, uid), name);
    int code = answer.code();
    if (code == 200 || code == 202) {
      return true;
    }
    if (code == 404 || code == 409) {
      return false;
    }
    throw new KubernetesClientException("deleting " + name + " answered " + code + ": " + answer.body(), code, null);
  }

  /**
   * A DELETE of {@code url} with {@code preconditions}, for objects fabric8 cannot delete that way
   * (its {@code lockResourceVersion} sends the resourceVersion alone, and no uid).
   *
   * @param what the object, for messages
   * @return the API server's answer, whatever its code
   * @throws KubernetesClientException when no answer came
   */
  public static HttpResponse<String> send(KubernetesClient client, String url, Preconditions preconditions,
      String what) {
    DeleteOptions options = new DeleteOptions();
    options.setPreconditions(preconditions);
    HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url)
        .delete("application/json", client.getKubernetesSerialization().asJson(options)).build();
    try {
      return client.getHttpClient().sendAsync(request, String.class).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted while deleting " + what, e);
    } catch (ExecutionException e) {
      throw new KubernetesClientException("deleting " + what + " failed: " + e.getCause(), e.getCause());
    }
  }
}
