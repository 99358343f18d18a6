package org.ipamoperators.egressip.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.cloud.aws.Ec2NodeNetwork;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
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
import org.junit.jupiter.api.Test;

/** Provider selection by platform among what ServiceLoader finds, without a cluster. */
class CloudNodeNetworksTest {
  private static final CloudSettings NO_SETTINGS = new CloudSettings(Map.of(), null, null);
  private final Map<String, Map<String, String>> secrets = new HashMap<>();

  private static Platform platform(String type) {
    return new Platform(type, true, null);
  }

  /** A provider of a made-up platform that counts what it creates and what is closed. */
  static final class Counting implements NodeNetworkProvider {
    final String name;
    final Set<String> platforms;
    final List<ProviderContext> created = new ArrayList<>();
    int closed;

    Counting(String name, String... platforms) {
      this.name = name;
      this.platforms = Set.of(platforms);
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Set<String> platforms() {
      return platforms;
    }

    @Override
    public List<ProviderSetting> settings() {
      return List.of(new ProviderSetting(name + ".zone", "a zone"));
    }

    @Override
    public Set<String> secrets() {
      return Set.of(name + "-keys");
    }

    @Override
    public NodeNetwork create(ProviderContext context) throws NodeNetworkException {
      if (context.setting(name + ".zone").filter("broken"::equals).isPresent()) {
        throw new NodeNetworkException(name, "BadZone", "zone 'broken' does not exist", false, null);
      }
      created.add(context);
      return new NodeNetwork() {
        @Override
        public NetworkCapabilities capabilities() {
          return new NetworkCapabilities(true, false, true, true, true);
        }

        @Override
        public NodeAttachment describe(NodeRef node) {
          return new NodeAttachment(node.name(), null, List.of(), null, Set.of(), 1);
        }

        @Override
        public Set<Ip> addressesInUse(IpRange subnet) {
          return Set.of();
        }

        @Override
        public List<AddressChangeResult> apply(List<AddressChange> changes) {
          return changes.stream().map(AddressChangeResult::applied).toList();
        }

        @Override
        public void close() {
          closed++;
        }
      };
    }
  }

  private CloudNodeNetworks networks(CloudSettings settings, NodeNetworkProvider... providers) {
    return new CloudNodeNetworks(List.of(providers), settings, name -> secrets.getOrDefault(name, Map.of()));
  }

  @Test
  void theProvidersOfTheClassPathAreFoundAndChosenByPlatform() {
    List<NodeNetworkProvider> found = CloudNodeNetworks.discover(getClass().getClassLoader());
    assertThat(found).extracting(NodeNetworkProvider::name).containsExactly("aws", "azure", "baremetal");
    CloudNodeNetworks networks = new CloudNodeNetworks(found, new CloudSettings(Map.of("aws.endpoint",
        "http://127.0.0.1:1", "azure.endpoint", "https://127.0.0.1:1", "azure.subscription-id", "sub-1"), null, null),
        name -> Map.of());

    NodeNetworks.Selection none = networks.select(platform("None"));
    assertThat(none.network()).isInstanceOf(BareMetalNodeNetwork.class);
    assertThat(none.problem()).isNull();
    assertThat(none.description()).isEqualTo("platform None served by NodeNetwork provider baremetal");
    assertThat(networks.select(platform("")).provider()).isEqualTo("baremetal");
    assertThat(networks.select(platform("vsphere")).provider()).as("any case").isEqualTo("baremetal");

    NodeNetworks.Selection aws = networks.select(new Platform("AWS", true, "eu-west-1"));
    assertThat(aws.network()).isInstanceOf(Ec2NodeNetwork.class);
    assertThat(aws.description()).isEqualTo("platform AWS served by NodeNetwork provider aws");

    // Azure's resource group comes from Infrastructure's platformStatus.azure, passed as it is
    NodeNetworks.Selection azure = networks.select(new Platform("Azure", true, null,
        Map.of("resourceGroupName", "cluster-rg", "cloudName", "AzurePublicCloud")));
    assertThat(azure.problem()).isNull();
    assertThat(azure.network()).isInstanceOf(org.ipamoperators.cloud.azure.AzureNodeNetwork.class);
    assertThat(((org.ipamoperators.cloud.azure.AzureNodeNetwork) azure.network()).settings().resourceGroup())
        .isEqualTo("cluster-rg");
    assertThat(networks.select(platform("Azure")).problem()).as("without Infrastructure's resource group")
        .contains("NodeNetwork provider azure cannot serve platform Azure", "resource group");
    networks.close();
  }

  @Test
  void aPlatformNoProviderServesIsNamedWithTheProvidersFound() {
    CloudNodeNetworks networks = new CloudNodeNetworks(CloudNodeNetworks.discover(getClass().getClassLoader()),
        NO_SETTINGS, name -> Map.of());

    NodeNetworks.Selection s = networks.select(platform("GCP"));

    assertThat(s.problem()).isEqualTo("no NodeNetwork provider serves platform GCP; found: aws (AWS), azure (Azure), "
        + "baremetal (BareMetal, EquinixMetal, External, KubeVirt, Libvirt, None, Nutanix, OpenStack, VSphere, oVirt)");
    assertThat(s.description()).isEqualTo(s.problem());
    assertThat(s.network().capabilities().requiresApiCalls()).as("nothing is called").isFalse();
    assertThat(s.network().apply(List.of(AddressChange.attach(Ip.parse("192.0.2.10"), "n1"))))
        .allMatch(AddressChangeResult::succeeded);
  }

  @Test
  void aProviderThatCannotServeIsReportedWithItsReasonAndTheFallbackMakesNoCalls() {
    CloudNodeNetworks networks = new CloudNodeNetworks(CloudNodeNetworks.discover(getClass().getClassLoader()),
        NO_SETTINGS, name -> Map.of());

    NodeNetworks.Selection s = networks.select(new Platform("AWS", true, null));

    assertThat(s.problem()).contains("NodeNetwork provider aws cannot serve platform AWS", "no AWS region",
        "IPAM_AWS_REGION");
    assertThat(s.network().capabilities().requiresApiCalls()).isFalse();
  }

  @Test
  void aNewProviderOnTheClassPathServesItsPlatformWithItsSettingsAndSecrets() {
    Counting fictional = new Counting("fictional", "Fictional");
    secrets.put("fictional-keys", Map.of("token", "t-1"));
    CloudNodeNetworks networks = networks(new CloudSettings(Map.of("fictional.zone", "z1"), null, null), fictional,
        new Counting("other", "Other"));

    NodeNetworks.Selection s = networks.select(new Platform("Fictional", true, "r1", Map.of("zoneSet", "zs-1")));

    assertThat(s.provider()).isEqualTo("fictional");
    assertThat(fictional.created).singleElement().satisfies(c -> {
      assertThat(c.platform()).isEqualTo("Fictional");
      assertThat(c.setting("fictional.zone")).contains("z1");
      assertThat(c.attribute("region")).contains("r1");
      assertThat(c.attribute("zoneSet")).as("Infrastructure's platformStatus.<type> fields").contains("zs-1");
      assertThat(c.secret("fictional-keys")).containsEntry("token", "t-1");
      assertThat(c.toString()).doesNotContain("t-1");
    });
  }

  @Test
  void oneNodesProviderIdIsPassedAndAskedForOnlyUntilKnown() {
    Counting fictional = new Counting("fictional", "Fictional");
    List<String> answers = new ArrayList<>(List.of("", "fictional://acct-1/vm-1"));
    int[] asked = {0};
    CloudNodeNetworks networks = new CloudNodeNetworks(List.of(fictional), NO_SETTINGS, name -> Map.of(), () -> {
      asked[0]++;
      String a = answers.isEmpty() ? "fictional://other" : answers.remove(0);
      return a.isEmpty() ? null : a;
    });

    networks.select(platform("Fictional"));
    networks.select(platform("Fictional"));
    networks.select(platform("Fictional"));

    assertThat(fictional.created).hasSize(2);
    assertThat(fictional.created.get(0).attribute(CloudNodeNetworks.NODE_PROVIDER_ID)).isEmpty();
    assertThat(fictional.created.get(1).attribute(CloudNodeNetworks.NODE_PROVIDER_ID))
        .contains("fictional://acct-1/vm-1");
    assertThat(asked[0]).as("kept once known").isEqualTo(2);
    networks.close();
  }

  @Test
  void theNetworkIsKeptWhileItsContextStaysAndRebuiltWithTheOldClosedWhenItChanges() {
    Counting fictional = new Counting("fictional", "Fictional");
    CloudNodeNetworks networks = networks(NO_SETTINGS, fictional);
    secrets.put("fictional-keys", Map.of("token", "t-1"));

    NodeNetwork first = networks.select(platform("Fictional")).network();
    assertThat(networks.select(platform("Fictional")).network()).isSameAs(first);
    assertThat(fictional.created).hasSize(1);

    secrets.put("fictional-keys", Map.of("token", "t-2"));
    NodeNetwork second = networks.select(platform("Fictional")).network();

    assertThat(second).isNotSameAs(first);
    assertThat(fictional.created).hasSize(2);
    assertThat(fictional.closed).as("the old network is closed").isEqualTo(1);
    networks.close();
    assertThat(fictional.closed).isEqualTo(2);
  }

  @Test
  void severalProvidersOfOnePlatformNeedTheSettingThatNamesOne() {
    Counting a = new Counting("alpha", "Shared");
    Counting b = new Counting("beta", "Shared");

    NodeNetworks.Selection ambiguous = networks(NO_SETTINGS, a, b).select(platform("Shared"));
    assertThat(ambiguous.problem()).contains("alpha, beta", "Shared", "IPAM_NODE_NETWORK_PROVIDER");
    assertThat(a.created).isEmpty();

    assertThat(networks(new CloudSettings(Map.of(), null, "beta"), a, b).select(platform("Shared")).provider())
        .isEqualTo("beta");
    assertThat(networks(new CloudSettings(Map.of(), null, "gamma"), a, b).select(platform("Shared")).problem())
        .contains("gamma", "not on the class path", "alpha (Shared), beta (Shared)");
  }

  @Test
  void aProviderRefusingItsSettingsIsReportedByName() {
    NodeNetworks.Selection s = networks(new CloudSettings(Map.of("fictional.zone", "broken"), null, null),
        new Counting("fictional", "Fictional")).select(platform("Fictional"));
    assertThat(s.problem()).contains("fictional", "zone 'broken' does not exist");
  }
}
