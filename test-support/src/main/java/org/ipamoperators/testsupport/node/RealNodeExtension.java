package org.ipamoperators.testsupport.node;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import java.nio.file.Path;
import org.ipamoperators.testsupport.kube.KubeApiExtension;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;

/** The JUnit 5 extension behind {@link RealNodeTest}; see there. */
public final class RealNodeExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback,
    ParameterResolver, TestExecutionExceptionHandler {

  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(RealNodeExtension.class);
  private static final String NAMESPACE = "namespace";

  @Override
  public void beforeAll(ExtensionContext context) {
    RealNodeTest annotation = AnnotationSupport.findAnnotation(context.getRequiredTestClass(), RealNodeTest.class)
        .orElse(null);
    if (annotation != null) {
      for (String property : annotation.imageProperties()) {
        if (System.getProperty(property) == null) {
          throw new TestAbortedException("no image: -D" + property + " is not set (the image profile builds it: "
              + "-Dipam.image.base=..., which scripts/test.sh passes as root)");
        }
      }
    }
    RealNode node = RealNode.shared();
    // One node per run: torn down when the engine finishes (the JVM's shutdown hook is the backstop).
    context.getRoot().getStore(STORE).getOrComputeIfAbsent(RealNode.class, k -> new Teardown(node), Teardown.class);
    if (annotation != null) {
      for (String property : annotation.imageProperties()) {
        Path tar = Path.of(System.getProperty(property));
        if (!node.loaded(tar)) {
          node.loadImage(tar);
        }
      }
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    String name = KubeApiExtension.namespaceName(context.getRequiredTestClass().getSimpleName(),
        context.getTestMethod().map(m -> m.getName()).orElse("test"));
    Namespace namespace = RealNode.shared().adminClient().namespaces().resource(new NamespaceBuilder()
        .withNewMetadata().withName(name).addToLabels(KubeApiExtension.TEST_NAMESPACE_LABEL, "true")
        .addToAnnotations("ipam-operators.org/test", context.getDisplayName()).endMetadata().build()).create();
    context.getStore(STORE).put(NAMESPACE, namespace);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Namespace namespace = context.getStore(STORE).remove(NAMESPACE, Namespace.class);
    if (namespace != null) {
      RealNode.shared().adminClient().namespaces().withName(namespace.getMetadata().getName()).delete();
    }
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
    try {
      throwable.addSuppressed(new NodeDiagnostics(RealNode.shared().diagnostics()));
    } catch (RuntimeException e) {
      throwable.addSuppressed(e);
    }
    throw throwable;
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == KubernetesClient.class || type == Namespace.class || type == RealNode.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    if (type == RealNode.class) {
      return RealNode.shared();
    }
    Namespace namespace = extensionContext.getStore(STORE).get(NAMESPACE, Namespace.class);
    if (namespace == null) {
      throw new ParameterResolutionException(type.getSimpleName()
          + " is only available in test methods and @BeforeEach/@AfterEach (a namespace exists per test)");
    }
    if (type == Namespace.class) {
      return namespace;
    }
    return RealNode.shared().adminClient().adapt(NamespacedKubernetesClient.class)
        .inNamespace(namespace.getMetadata().getName());
  }

  /** The node's state when a test failed, attached to the failure. */
  static final class NodeDiagnostics extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NodeDiagnostics(String text) {
      super("real node at the failure:\n" + text, null, false, false);
    }
  }

  private record Teardown(RealNode node) implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      node.close();
    }
  }
}
