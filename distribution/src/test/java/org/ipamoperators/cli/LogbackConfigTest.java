package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import java.net.URL;
import org.junit.jupiter.api.Test;

/** The logging configuration ipam.jar and the images ship (main's logback.xml, not the tests' one). */
class LogbackConfigTest {

  @Test
  void ipamAtInfoLibrariesAtWarnAndTheKnownNoiseOnlyAtError() throws Exception {
    URL config = getClass().getClassLoader().getResource("logback.xml");
    assertThat(config).isNotNull();
    LoggerContext context = new LoggerContext();
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(config);
    try {
      assertThat(context.getLogger("org.ipamoperators.egressip.EgressIPAMReconciler").isInfoEnabled()).isTrue();
      assertThat(context.getLogger("io.javaoperatorsdk.operator.Operator").isInfoEnabled()).isFalse();
      assertThat(context.getLogger("io.javaoperatorsdk.operator.Operator").isWarnEnabled()).isTrue();
      assertThat(context.getLogger("com.azure.core.http.policy.RetryPolicy").isWarnEnabled()).isTrue();
      // Azure's JDK adapter: one WARN per request body it sizes (AzureNodeNetworkArmTest names the logger).
      assertThat(context.getLogger("com.azure.core.http.jdk.httpclient.JdkHttpClient").isWarnEnabled()).isFalse();
      assertThat(context.getLogger("com.azure.core.http.jdk.httpclient.JdkHttpClient").isErrorEnabled()).isTrue();
      assertThat(context.getLogger("io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils").isWarnEnabled())
          .isFalse();
    } finally {
      context.stop();
    }
  }
}
