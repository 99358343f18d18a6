package org.example.fictional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.cloud.NodeNetworks;
import org.ipamoperators.egressip.network.Platform;
import org.junit.jupiter.api.Test;

/**
 * The egress controller's provider selection, unchanged, finds this jar's provider beside bare
 * metal and AWS and uses it for the Fictional platform.
 */
class OperatorPicksItUpTest {
  @Test
  void theFictionalPlatformIsServedByThisProvider() {
    FictionalCloud.create("prod", "203.0.113.0/24");
    CloudNodeNetworks networks = new CloudNodeNetworks(CloudNodeNetworks.discover(getClass().getClassLoader()),
        new CloudSettings(Map.of("fictional.cloud", "prod"), null, null), name -> Map.of());

    NodeNetworks.Selection s = networks.select(new Platform("Fictional", true, null));

    assertNull(s.problem());
    assertEquals("fictional", s.provider());
    assertInstanceOf(FictionalCloudNetwork.class, s.network());
    assertEquals("platform Fictional served by NodeNetwork provider fictional", s.description());
    assertEquals("baremetal", networks.select(new Platform("None", false, null)).provider());
  }
}
