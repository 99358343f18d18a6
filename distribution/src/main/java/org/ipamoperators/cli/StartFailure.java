package org.ipamoperators.cli;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/** A reason {@code ipam operator} cannot start, worded as the one line the user sees. */
public final class StartFailure extends Exception {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  public StartFailure(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public StartFailure(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  /**
   * Whether the API server refused for a moment (throttled, overloaded, failing) or a connection
   * broke mid-answer (reset, EOF): worth another try. An address that refuses connections, a host
   * that does not resolve, a TLS failure or a timeout is taken as wrong input and fails at once.
   */
  public static boolean isTransient(Throwable e) {
    boolean broken = false;
    List<Throwable> seen = new ArrayList<>();
    for (Throwable t = e; t != null && !seen.contains(t) && seen.size() < 32; t = t.getCause()) {
      seen.add(t);
      if (t instanceof KubernetesClientException k && (k.getCode() == 429 || k.getCode() >= 500)) {
        return true;
      }
      if (wrongAddress(t)) {
        return false; // anywhere in the chain: a refused connect is often wrapped in a plain IOException
      }
      broken |= t instanceof IOException;
    }
    return broken;
  }

  private static boolean wrongAddress(Throwable t) {
    return t instanceof ConnectException || t instanceof NoRouteToHostException || t instanceof UnknownHostException
        || t instanceof SSLException || t instanceof HttpTimeoutException || t instanceof SocketTimeoutException;
  }

  public int exitCode() {
    return exitCode;
  }

  /**
   * The gist of an exception chain on one line: the innermost cause that says something (the HTTP
   * status of a Kubernetes error, a refused connection, an unknown host, a TLS failure, a message).
   */
  public static String describe(Throwable e) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = e; t != null && !chain.contains(t) && chain.size() < 32; t = t.getCause()) {
      chain.add(t);
    }
    for (int i = chain.size() - 1; i >= 0; i--) {
      String s = explain(chain.get(i));
      if (s != null) {
        return oneLine(s);
      }
    }
    return chain.get(chain.size() - 1).getClass().getSimpleName();
  }

  private static String explain(Throwable t) {
    String m = t.getMessage() == null || t.getMessage().isBlank() ? null : t.getMessage();
    if (t instanceof KubernetesClientException k) {
      if (k.getCode() > 0) {
        String status = k.getStatus() == null ? null : k.getStatus().getMessage();
        return "HTTP " + k.getCode() + (status == null || status.isBlank() ? "" : ": " + status);
      }
      return m == null || m.startsWith("An error has occurred") ? null : m;
    }
    if (t instanceof ConnectException) {
      // The same words whichever HTTP client and JDK phrased it ("Connection refused", none at all).
      return m == null || m.equalsIgnoreCase("connection refused") ? "connection refused" : m;
    }
    if (t instanceof UnresolvedAddressException) {
      return "unknown host";
    }
    if (t instanceof UnknownHostException) {
      return "unknown host " + m;
    }
    if (t instanceof SSLException) {
      return "TLS failed: " + (m == null ? t.getClass().getSimpleName() : m);
    }
    if (t instanceof HttpTimeoutException || t instanceof SocketTimeoutException || t instanceof TimeoutException) {
      return "timed out" + (m == null ? "" : ": " + m);
    }
    return m;
  }

  public static String oneLine(String s) {
    return s.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
  }
}
