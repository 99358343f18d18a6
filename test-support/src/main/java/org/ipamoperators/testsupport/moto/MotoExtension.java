package org.ipamoperators.testsupport.moto;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import software.amazon.awssdk.services.ec2.Ec2Client;

/** The JUnit 5 extension behind {@link MotoTest}; see there. */
public final class MotoExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver,
    TestExecutionExceptionHandler {

  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(MotoExtension.class);
  private static final String LOG_POSITION = "logPosition";

  @Override
  public void beforeAll(ExtensionContext context) {
    MotoServer.shared();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    MotoServer server = MotoServer.shared();
    server.reset();
    context.getStore(STORE).put(LOG_POSITION, server.logPosition());
  }

  /** A 500 from moto says nothing by itself; its traceback (e.g. a filter moto lacks) says what went wrong. */
  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
    Long position = context.getStore(STORE).get(LOG_POSITION, Long.class);
    if (position != null) {
      String log = MotoServer.shared().logSince(position);
      int traceback = log.indexOf("Traceback (most recent call last)");
      if (traceback >= 0) {
        String excerpt = log.substring(traceback);
        throwable.addSuppressed(new MotoServerError(excerpt.length() > 8000
            ? excerpt.substring(0, 4000) + "\n...\n" + excerpt.substring(excerpt.length() - 4000) : excerpt));
      }
    }
    throw throwable;
  }

  /** moto's own traceback, attached to a failing test. */
  static final class MotoServerError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MotoServerError(String traceback) {
      super("moto_server logged during the test:\n" + traceback, null, false, false);
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == Ec2Client.class || type == MotoServer.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    MotoServer server = MotoServer.shared();
    if (parameterContext.getParameter().getType() == MotoServer.class) {
      return server;
    }
    // One client per test (or per class, for @BeforeAll). Jupiter 5.13+ closes AutoCloseable store values
    // when their extension context ends.
    return extensionContext.getStore(STORE)
        .getOrComputeIfAbsent(Ec2Client.class, k -> server.ec2Client(), Ec2Client.class);
  }
}
