package org.ipamoperators.cli.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.ConsoleAppender;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The logging configuration ipam.jar and the images ship (set up in code), and when it steps aside. */
class IpamLogConfiguratorTest {
  /** A class path with no logback XML on it, as ipam.jar's and the images' own. */
  private static final ClassLoader NO_XML = new URLClassLoader(new URL[0], null);

  @Test
  void ipamAtInfoLibrariesAtWarnAndTheKnownNoiseOnlyAtError() throws Exception {
    LoggerContext context = new LoggerContext();
    ExecutionStatus status = configure(context, Map.of(), NO_XML);
    try {
      assertThat(status).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
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

  @Test
  void oneConsoleAppenderOnStderrWithTheDatedPattern() {
    LoggerContext context = new LoggerContext();
    configure(context, Map.of(), NO_XML);
    try {
      Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
      ConsoleAppender<?> console = (ConsoleAppender<?>) root.getAppender("CONSOLE");
      assertThat(console.isStarted()).isTrue();
      assertThat(console.getTarget()).isEqualTo("System.err");
      assertThat(((PatternLayoutEncoder) console.getEncoder()).getPattern())
          .isEqualTo("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n");
      assertThat(root.iteratorForAppenders()).toIterable().hasSize(1);
    } finally {
      context.stop();
    }
  }

  @Test
  void aConfigurationFileOrALogbackXmlOnTheClassPathIsLeftToLogback(@TempDir Path dir) throws IOException {
    LoggerContext context = new LoggerContext();
    assertThat(configure(context, Map.of("logback.configurationFile", "custom.xml"), NO_XML))
        .isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    Files.writeString(dir.resolve("logback.xml"), "<configuration/>");
    try (URLClassLoader withXml = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
      assertThat(configure(context, Map.of(), withXml)).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
    }
    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders()).toIterable().isEmpty();
  }

  @Test
  void logbackFindsItAsAService() {
    assertThat(ServiceLoader.load(Configurator.class, ContextInitializer.class.getClassLoader()).stream()
        .map(ServiceLoader.Provider::type)).contains(IpamLogConfigurator.class);
  }

  private static ExecutionStatus configure(LoggerContext context, Map<String, String> properties,
      ClassLoader resources) {
    IpamLogConfigurator configurator = new IpamLogConfigurator(properties::get, resources);
    configurator.setContext(context);
    return configurator.configure(context);
  }
}
