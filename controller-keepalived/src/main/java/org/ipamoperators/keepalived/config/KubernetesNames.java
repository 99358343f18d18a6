package org.ipamoperators.keepalived.config;

import java.util.regex.Pattern;

/** The name rules of the Kubernetes objects the renderer reads (they end up as words in keepalived.conf). */
final class KubernetesNames {

  /** RFC 1123 subdomain: what namespaces, services and nodes are named with (services are stricter still). */
  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private KubernetesNames() {
  }

  static boolean isName(String name) {
    return name != null && name.length() <= 253 && SUBDOMAIN.matcher(name).matches();
  }

  static String requireName(String what, String name) {
    if (!isName(name)) {
      throw new IllegalArgumentException(what + " is not a Kubernetes name (lower case letters, digits, '-', '.'): '"
          + name + "'");
    }
    return name;
  }
}
