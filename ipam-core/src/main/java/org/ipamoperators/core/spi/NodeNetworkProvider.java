package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Set;

/**
 * Builds the {@link NodeNetwork} of the platforms it serves. Providers are found with
 * {@link java.util.ServiceLoader}: a jar registers its provider in
 * {@code META-INF/services/org.ipamoperators.core.spi.NodeNetworkProvider} (class path) or with
 * {@code provides org.ipamoperators.core.spi.NodeNetworkProvider with ...} (module path), and a
 * controller chooses among those it finds by the cluster's platform. Adding a provider jar needs no
 * change to any controller.
 *
 * <p>An implementation has a public no-argument constructor, is cheap to construct (nothing is
 * called before {@link #create}) and is stateless: every network it creates is independent and
 * closed by whoever created it.
 */
public interface NodeNetworkProvider {

  /**
   * A short, stable, lower-case name (such as {@code aws}, {@code baremetal}), shown in logs and
   * status conditions, and what the operator's provider setting selects when several providers
   * serve one platform.
   *
   * @return the provider's name
   */
  String name();

  /**
   * The platforms served, spelled as OpenShift's {@code Infrastructure} reports them in
   * {@code status.platformStatus.type} (such as {@code AWS}, {@code Azure}, {@code BareMetal},
   * {@code None}); compared without regard to case.
   *
   * @return the platform types this provider serves, never empty
   */
  Set<String> platforms();

  /**
   * The settings the provider reads, for documentation, {@code --help} and to tell an operator what
   * may be set. The controller resolves each from the value its operator was given (such as
   * {@code --aws-region}), else the environment variable {@code IPAM_<KEY>} (upper case, dots and dashes as
   * underscores).
   *
   * @return the settings read by {@link #create}; empty by default
   */
  default List<ProviderSetting> settings() {
    return List.of();
  }

  /**
   * Names of Kubernetes Secrets, in the operator's own namespace, whose data the provider may read
   * (credentials of an older operator, for example). A Secret that is absent or may not be read
   * reaches {@link #create} as empty data.
   *
   * @return Secret names; empty by default
   */
  default Set<String> secrets() {
    return Set.of();
  }

  /**
   * A network for the platform in {@code context}, to be closed by the caller. The controller keeps
   * it while the context stays equal and creates a new one (closing the old) when it changes.
   *
   * @param context the platform, its settings and secrets
   * @return a new network
   * @throws NodeNetworkException when the settings are unusable (no region, half a key pair...):
   *     the subject is the provider's name and the message says what to set
   */
  NodeNetwork create(ProviderContext context) throws NodeNetworkException;
}
