package org.example.fictional;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;

/**
 * Serves the platform {@code Fictional}. Registered in
 * {@code META-INF/services/org.ipamoperators.core.spi.NodeNetworkProvider}: a jar on the operator's
 * class path is all it takes.
 */
public final class FictionalCloudProvider implements NodeNetworkProvider {
  /** Setting {@code IPAM_FICTIONAL_CLOUD}: which cloud to connect to. */
  public static final ProviderSetting CLOUD = new ProviderSetting("fictional.cloud", "the fictional cloud's name");

  @Override
  public String name() {
    return "fictional";
  }

  @Override
  public Set<String> platforms() {
    return Set.of("Fictional");
  }

  @Override
  public List<ProviderSetting> settings() {
    return List.of(CLOUD);
  }

  @Override
  public NodeNetwork create(ProviderContext context) throws NodeNetworkException {
    String name = context.setting(CLOUD.key()).orElseThrow(() -> new NodeNetworkException(name(), "NoCloud",
        "which fictional cloud? set " + CLOUD.environmentVariable(), false, null));
    FictionalCloud cloud = FictionalCloud.named(name).orElseThrow(() -> new NodeNetworkException(name(),
        "UnknownCloud", "no fictional cloud named " + name, false, null));
    return new FictionalCloudNetwork(cloud);
  }
}
