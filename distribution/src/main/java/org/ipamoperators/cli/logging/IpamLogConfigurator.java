package org.ipamoperators.cli.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The logging of the {@code ipam} command and the images, set up in code: logback's XML configuration
 * (Joran and the JDK's XML parser) is several hundred classes an operator would load for five lines.
 * ipam's own messages at INFO, everything else (JOSDK, fabric8) at WARN, on stderr, so that the output
 * of commands such as {@code ipam plan -o json} stays clean on stdout. A file given with
 * {@code -Dlogback.configurationFile=FILE}, or a {@code logback-test.xml} or {@code logback.xml} on the
 * class path, still wins: then logback's own XML configuration runs as usual.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class IpamLogConfigurator extends ContextAwareBase implements Configurator {
  static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n";
  /** Loggers set apart from the rule above, by name. */
  static final Map<String, Level> LEVELS = Map.of(
      "org.ipamoperators", Level.INFO,
      // "The client is using resource type ... with unstable version": our CRDs are v1alpha1 on purpose.
      "io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils", Level.ERROR,
      // Azure's JDK HTTP adapter warns on each request body it sizes with Content-Length (each NIC PUT); the
      // header is dropped as intended, and this logger says nothing else below ERROR.
      "com.azure.core.http.jdk.httpclient.JdkHttpClient", Level.ERROR);
  private static final List<String> XML_CONFIGURATIONS = List.of("logback-test.xml", "logback.xml");
  private final UnaryOperator<String> properties;
  private final ClassLoader resources;

  /** The one logback's ServiceLoader makes: this JVM's system properties and class path. */
  public IpamLogConfigurator() {
    this(System::getProperty, IpamLogConfigurator.class.getClassLoader());
  }

  IpamLogConfigurator(UnaryOperator<String> properties, ClassLoader resources) {
    this.properties = properties;
    this.resources = resources;
  }

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (xmlConfigurationGiven()) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("CONSOLE");
    console.setTarget("System.err");
    console.setEncoder(encoder);
    console.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    root.addAppender(console);
    LEVELS.forEach((name, level) -> context.getLogger(name).setLevel(level));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  private boolean xmlConfigurationGiven() {
    return properties.apply("logback.configurationFile") != null
        || XML_CONFIGURATIONS.stream().anyMatch(name -> resources.getResource(name) != null);
  }
}
