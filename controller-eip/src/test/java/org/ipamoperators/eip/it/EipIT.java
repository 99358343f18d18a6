package org.ipamoperators.eip.it;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** What every controller-eip IT stands on: the real apiserver with the Eip, IPClaim and IPBlock CRDs (as the chart installs them), moto, and a fresh world. */
@KubeApiTest(crds = {"META-INF/fabric8/eips.materialize.cloud-v1.yml",
    "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml"})
@MotoTest
abstract class EipIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  EipWorld world;
  KubeApiServer server;
  MotoServer moto;

  @BeforeEach
  void setUp(KubernetesClient client, KubeApiServer server, MotoServer moto) {
    this.world = new EipWorld(client, moto);
    this.server = server;
    this.moto = moto;
  }

  @AfterEach
  void tearDown() {
    world.close();
  }
}
