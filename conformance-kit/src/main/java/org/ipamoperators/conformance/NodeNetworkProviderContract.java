package org.ipamoperators.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link NodeNetworkProvider}: found by {@link ServiceLoader} under its name, a
 * well-formed description, a network created and closed from a usable context, and a clear error
 * from an unusable one. Extend it in the provider's test.
 */
public abstract class NodeNetworkProviderContract {

  /** For subclasses. */
  protected NodeNetworkProviderContract() {}

  /**
   * The provider's name, as it should be found on the class path.
   *
   * @return the expected {@link NodeNetworkProvider#name()}
   */
  protected abstract String providerName();

  /**
   * A context from which the provider can create a network (no platform call may be needed to
   * create it).
   *
   * @return a usable context
   */
  protected abstract ProviderContext usableContext();

  /**
   * A context the provider must refuse (a missing region, half a key pair), or null when every
   * context is usable.
   *
   * @return an unusable context, or null
   */
  protected abstract ProviderContext unusableContext();

  private NodeNetworkProvider found() {
    List<NodeNetworkProvider> named = ServiceLoader.load(NodeNetworkProvider.class).stream()
        .map(ServiceLoader.Provider::get).filter(p -> providerName().equals(p.name())).toList();
    assertThat(named).as("providers named %s registered in META-INF/services", providerName()).hasSize(1);
    return named.get(0);
  }

  /** The provider is registered for {@link ServiceLoader} once, under its name. */
  @Test
  public void theProviderIsFoundOnTheClassPathUnderItsName() {
    assertThat(found().name()).isEqualTo(providerName());
  }

  /** Name, platforms and settings are well formed, so controllers can list and choose them. */
  @Test
  public void itsDescriptionIsWellFormed() {
    NodeNetworkProvider p = found();
    assertThat(p.name()).matches("[a-z0-9]+(-[a-z0-9]+)*");
    assertThat(p.platforms()).as("platforms served").isNotEmpty().allSatisfy(t -> assertThat(t).isNotNull());
    assertThat(p.settings()).extracting(ProviderSetting::key).doesNotHaveDuplicates();
    assertThat(p.secrets()).isNotNull();
    assertThat(p.platforms().stream().map(t -> t.toLowerCase(Locale.ROOT)).distinct().count())
        .as("platforms differ in more than case").isEqualTo(p.platforms().size());
  }

  /**
   * A usable context gives a network that answers and closes, twice without harm.
   *
   * @throws Exception when creation fails
   */
  @Test
  public void aUsableContextGivesANetworkThatCloses() throws Exception {
    NodeNetwork network = found().create(usableContext());
    assertThat(network).isNotNull();
    assertThat(network.capabilities()).isNotNull();
    network.close();
    network.close();
  }

  /** An unusable context is refused with the provider named and what to set. */
  @Test
  public void anUnusableContextIsRefusedNamingTheProvider() {
    ProviderContext bad = unusableContext();
    if (bad == null) {
      assertThat(found().settings()).as("a provider that refuses no context needs no setting").isEmpty();
      return;
    }
    assertThatThrownBy(() -> found().create(bad)).isInstanceOf(NodeNetworkException.class)
        .satisfies(e -> assertThat(((NodeNetworkException) e).subject()).isEqualTo(providerName()));
  }
}
