package org.ipamoperators.testsupport.netns;

import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.opentest4j.TestAbortedException;

/** The JUnit 5 extension behind {@link NetnsTest}; see there. */
public final class NetnsExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {

  /** System property that turns "no network namespaces here" from an aborted test into a failure. */
  public static final String REQUIRE_PROPERTY = "ipam.test.requireNetns";

  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(NetnsExtension.class);

  @Override
  public void beforeEach(ExtensionContext context) {
    requireNetworkNamespaces();
  }

  /**
   * Aborts the current test (or fails it, with {@value #REQUIRE_PROPERTY}=true) if network namespaces cannot be
   * created. For tests that use namespaces without this extension.
   */
  public static void requireNetworkNamespaces() {
    Optional<String> reason = NetworkLab.unavailableReason();
    if (reason.isPresent()) {
      String message = "This test needs network namespaces, which need root: " + reason.get()
          + ". Run it as root (CI does), e.g. sudo -E mvn verify.";
      if (Boolean.getBoolean(REQUIRE_PROPERTY)) {
        throw new IllegalStateException(message + " (-D" + REQUIRE_PROPERTY + "=true makes this a failure.)");
      }
      throw new TestAbortedException(message);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    NetworkLab lab = context.getStore(STORE).remove(NetworkLab.class, NetworkLab.class);
    if (lab != null) {
      lab.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == NetworkLab.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return extensionContext.getStore(STORE).getOrComputeIfAbsent(NetworkLab.class, k -> NetworkLab.create(),
        NetworkLab.class);
  }
}
