package org.ipamoperators.egressip.cloud;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;
import org.ipamoperators.egressip.network.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the {@link NodeNetwork} of the cluster's platform among the {@link NodeNetworkProvider}s
 * on the class path ({@link ServiceLoader}): the one that serves the platform, or the one the
 * provider setting names. No provider is named here: adding a provider jar is all it takes.
 *
 * <p>The provider gets its settings, what the platform reports of itself (the text fields of
 * {@code Infrastructure}'s {@code status.platformStatus.<type>}, such as {@code region}, and one node's
 * {@code spec.providerID} as {@value #NODE_PROVIDER_ID}) and the Secrets it asks for (read in
 * the operator's namespace; absent or forbidden ones arrive empty). Its network is kept while that
 * context stays equal and rebuilt (the old one closed) when it changes, such as new keys in a
 * Secret. When no provider can serve, a network that makes no calls stands in, and the selection
 * names the platform and the providers found, for the EgressIPAM condition. Secret values are never
 * logged.
 */
public final class CloudNodeNetworks implements NodeNetworks, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CloudNodeNetworks.class);
  private static final NodeNetwork NO_CALLS = new ClusterNetworkOnly();
  /** The attribute holding one node's {@code spec.providerID} (its account, subscription, resource group). */
  public static final String NODE_PROVIDER_ID = "nodeProviderID";

  /** Reads a Secret of the operator's namespace: its decoded data, empty when absent or forbidden. */
  @FunctionalInterface
  public interface SecretReader {
    Map<String, String> read(String name);
  }

  private record Current(String provider, ProviderContext context, NodeNetwork network) {}

  private final List<NodeNetworkProvider> providers;
  private final CloudSettings settings;
  private final SecretReader secrets;
  private final java.util.function.Supplier<String> nodeProviderId;
  private String knownNodeProviderId;
  private Current current;
  private String lastReport;

  public CloudNodeNetworks(KubernetesClient client, CloudSettings settings) {
    this(client, settings, CloudNodeNetworks.class.getClassLoader());
  }

  /** With the providers {@code providers} sees (the class path, and provider jars a loader adds over it). */
  public CloudNodeNetworks(KubernetesClient client, CloudSettings settings, ClassLoader providers) {
    this(discover(providers), settings, clusterSecrets(client, settings), anyNodeProviderId(client));
  }

  public CloudNodeNetworks(List<NodeNetworkProvider> providers, CloudSettings settings, SecretReader secrets) {
    this(providers, settings, secrets, () -> null);
  }

  /** With {@code nodeProviderId} giving one node's {@code spec.providerID} (or null), asked until it gives one. */
  public CloudNodeNetworks(List<NodeNetworkProvider> providers, CloudSettings settings, SecretReader secrets,
      java.util.function.Supplier<String> nodeProviderId) {
    this.providers = List.copyOf(providers);
    this.settings = settings;
    this.secrets = secrets;
    this.nodeProviderId = nodeProviderId;
    LOG.info("NodeNetwork providers on the class path: {}", found());
  }

  /** The providers a class loader sees, one per name (the first wins), sorted by name. */
  public static List<NodeNetworkProvider> discover(ClassLoader loader) {
    Map<String, NodeNetworkProvider> byName = new LinkedHashMap<>();
    for (var it = ServiceLoader.load(NodeNetworkProvider.class, loader).iterator(); ; ) {
      NodeNetworkProvider p;
      try {
        if (!it.hasNext()) {
          break;
        }
        p = it.next();
      } catch (ServiceConfigurationError e) {
        LOG.warn("a NodeNetwork provider could not be loaded: {}", e.getMessage());
        continue;
      }
      NodeNetworkProvider before = byName.putIfAbsent(p.name(), p);
      if (before != null && before.getClass() != p.getClass()) {
        LOG.warn("two NodeNetwork providers are named {}: {} is used, {} ignored", p.name(),
            before.getClass().getName(), p.getClass().getName());
      }
    }
    return byName.values().stream().sorted((a, b) -> a.name().compareTo(b.name())).toList();
  }

  /** Each provider found with the platforms it serves, such as "aws (AWS), baremetal (BareMetal, None)". */
  public String found() {
    if (providers.isEmpty()) {
      return "none";
    }
    return providers.stream().map(p -> p.name() + " (" + String.join(", ", new TreeSet<>(p.platforms())) + ")")
        .collect(Collectors.joining(", "));
  }

  @Override
  public synchronized Selection select(Platform platform) {
    String type = platform.type() == null || platform.type().isBlank() ? "None" : platform.type();
    NodeNetworkProvider provider;
    try {
      provider = choose(type);
    } catch (IllegalStateException e) {
      return unserved(type, e.getMessage());
    }
    ProviderContext context;
    try {
      context = context(provider, type, platform);
    } catch (RuntimeException e) {
      return unserved(type, "NodeNetwork provider " + provider.name() + " for platform " + type + ": "
          + e.getMessage());
    }
    if (current == null || !current.provider().equals(provider.name()) || !current.context().equals(context)) {
      NodeNetwork network;
      try {
        network = provider.create(context);
      } catch (NodeNetworkException e) {
        String why = e.getMessage().startsWith(e.subject() + ": ")
            ? e.getMessage().substring(e.subject().length() + 2) : e.getMessage();
        return unserved(type, "NodeNetwork provider " + provider.name() + " cannot serve platform " + type + ": " + why);
      } catch (RuntimeException e) {
        return unserved(type, "NodeNetwork provider " + provider.name() + " cannot serve platform " + type + ": "
            + e.getMessage());
      }
      close();
      current = new Current(provider.name(), context, network);
      report("platform " + type + " served by NodeNetwork provider " + provider.name() + " ("
          + provider.getClass().getName() + ")");
    }
    return new Selection(current.network(), null, provider.name(), type);
  }

  private NodeNetworkProvider choose(String type) {
    if (settings.provider() != null) {
      return providers.stream().filter(p -> p.name().equals(settings.provider())).findFirst()
          .orElseThrow(() -> new IllegalStateException(CloudSettings.PROVIDER_ENV + " names NodeNetwork provider "
              + settings.provider() + ", which is not on the class path; found: " + found()));
    }
    List<NodeNetworkProvider> serving = providers.stream()
        .filter(p -> p.platforms().stream().anyMatch(t -> t.equalsIgnoreCase(type))).toList();
    if (serving.isEmpty()) {
      throw new IllegalStateException("no NodeNetwork provider serves platform " + type + "; found: " + found());
    }
    if (serving.size() > 1) {
      throw new IllegalStateException("NodeNetwork providers " + serving.stream().map(NodeNetworkProvider::name)
          .collect(Collectors.joining(", ")) + " all serve platform " + type + "; choose one with "
          + CloudSettings.PROVIDER_ENV);
    }
    return serving.get(0);
  }

  private ProviderContext context(NodeNetworkProvider provider, String type, Platform platform) {
    Map<String, String> attributes = new HashMap<>(platform.attributes());
    if (knownNodeProviderId == null) {
      knownNodeProviderId = nodeProviderId.get(); // kept once known: it tells the account, which does not change
    }
    if (knownNodeProviderId != null) {
      attributes.put(NODE_PROVIDER_ID, knownNodeProviderId);
    }
    if (platform.awsRegion() != null) {
      attributes.put("region", platform.awsRegion());
    }
    Map<String, String> values = new HashMap<>();
    for (ProviderSetting s : provider.settings()) {
      String v = settings.value(s);
      if (v != null) {
        values.put(s.key(), v);
      }
    }
    Map<String, Map<String, String>> data = new HashMap<>();
    for (String name : provider.secrets()) {
      Map<String, String> d = secrets.read(name);
      if (!d.isEmpty()) {
        data.put(name, d);
      }
    }
    return new ProviderContext(type, attributes, values, data);
  }

  private Selection unserved(String type, String problem) {
    report(problem + "; the addresses are not attached through any cloud API");
    return new Selection(NO_CALLS, problem, null, type);
  }

  /** Logs a change of choice once, not at every reconcile. */
  private void report(String line) {
    if (!line.equals(lastReport)) {
      LOG.info("{}", line);
      lastReport = line;
    }
  }

  /** Closes the current network, if any. */
  @Override
  public synchronized void close() {
    if (current != null) {
      current.network().close();
      current = null;
    }
  }

  /** The {@code spec.providerID} of one node (a list of at most one), or null. */
  static java.util.function.Supplier<String> anyNodeProviderId(KubernetesClient client) {
    return () -> {
      try {
        return client.nodes().list(new io.fabric8.kubernetes.api.model.ListOptionsBuilder().withLimit(1L).build())
            .getItems().stream().map(n -> n.getSpec() == null ? null : n.getSpec().getProviderID())
            .filter(id -> id != null && !id.isBlank()).findFirst().orElse(null);
      } catch (KubernetesClientException e) {
        return null; // nodes may not be listed: providers do without
      }
    };
  }

  /** The data of a Secret in the operator's namespace; a Secret that may not be read counts as absent. */
  public static SecretReader clusterSecrets(KubernetesClient client, CloudSettings settings) {
    return name -> {
      String ns = settings.operatorNamespace() != null ? settings.operatorNamespace() : client.getNamespace();
      if (ns == null) {
        return Map.of();
      }
      Secret secret;
      try {
        secret = client.secrets().inNamespace(ns).withName(name).get();
      } catch (KubernetesClientException e) {
        if (e.getCode() == 403) {
          return Map.of(); // not allowed to read it: the provider's defaults apply
        }
        throw new IllegalStateException("cannot read Secret " + ns + "/" + name + ": " + e.getMessage(), e);
      }
      if (secret == null) {
        return Map.of();
      }
      Map<String, String> out = new HashMap<>();
      if (secret.getStringData() != null) {
        out.putAll(secret.getStringData());
      }
      if (secret.getData() != null) {
        secret.getData().forEach((k, v) -> out.put(k, new String(Base64.getDecoder().decode(v),
            StandardCharsets.UTF_8)));
      }
      return out;
    };
  }

  /**
   * Where no provider serves: nothing is called and every change is taken as done, as on bare
   * metal, so addresses are still allocated and written to the cluster network.
   */
  static final class ClusterNetworkOnly implements NodeNetwork {
    @Override
    public NetworkCapabilities capabilities() {
      return new NetworkCapabilities(true, true, false, false, false);
    }

    @Override
    public NodeAttachment describe(NodeRef node) {
      Ip primary = node.addresses().isEmpty() ? null : node.addresses().get(0);
      return new NodeAttachment(node.name(), null, List.of(), primary, Set.of(), NodeAttachment.UNLIMITED);
    }

    @Override
    public Set<Ip> addressesInUse(IpRange subnet) {
      return Set.of();
    }

    @Override
    public List<AddressChangeResult> apply(List<AddressChange> changes) {
      return new ArrayList<>(changes.stream().map(AddressChangeResult::applied).toList());
    }

    @Override
    public String toString() {
      return "no NodeNetwork provider";
    }
  }
}
