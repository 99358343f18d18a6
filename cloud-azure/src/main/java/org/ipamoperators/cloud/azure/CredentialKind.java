package org.ipamoperators.cloud.azure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A link of the credential chain, named as in the {@code azure.credential-order} setting. */
public enum CredentialKind {
  /** The service principal of the old operator's Secret ({@code azure_client_id}, {@code azure_client_secret}). */
  CLIENT_SECRET("client-secret"),
  /** A federated token file ({@code AZURE_FEDERATED_TOKEN_FILE}: AKS' webhook, OpenShift's short-lived credentials). */
  WORKLOAD_IDENTITY("workload-identity"),
  /** The VM's or node pool's managed identity (instance metadata). */
  MANAGED_IDENTITY("managed-identity");

  /**
   * The Secret first (when it exists): the identity the old operator used and that was granted the
   * network role; then workload identity, then the node's managed identity.
   */
  public static final List<CredentialKind> DEFAULT_ORDER = List.of(CLIENT_SECRET, WORKLOAD_IDENTITY, MANAGED_IDENTITY);

  private final String setting;

  CredentialKind(String setting) {
    this.setting = setting;
  }

  public String setting() {
    return setting;
  }

  /** {@code "managed-identity, client-secret"}: the kinds in that order, each once; unknown names refused. */
  public static List<CredentialKind> parseOrder(String text) {
    List<CredentialKind> out = new ArrayList<>();
    for (String part : text.split(",")) {
      String name = part.trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty()) {
        continue;
      }
      CredentialKind k = List.of(values()).stream().filter(v -> v.setting.equals(name)).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown credential '" + part.trim() + "' in the credential "
              + "order (known: client-secret, workload-identity, managed-identity)"));
      if (out.contains(k)) {
        throw new IllegalArgumentException("credential '" + name + "' named twice in the credential order");
      }
      out.add(k);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("the credential order names no credential");
    }
    return List.copyOf(out);
  }
}
