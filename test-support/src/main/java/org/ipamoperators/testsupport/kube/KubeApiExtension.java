package org.ipamoperators.testsupport.kube;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The JUnit 5 extension behind {@link KubeApiTest}; see there. Usable on its own with {@code @ExtendWith}. */
public final class KubeApiExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback,
    ParameterResolver {

  /** Label put on every test namespace. */
  public static final String TEST_NAMESPACE_LABEL = "ipam-operators.org/test-namespace";

  private static final Logger LOG = LoggerFactory.getLogger(KubeApiExtension.class);
  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(KubeApiExtension.class);
  private static final String CLUSTER_SCOPED_KINDS = "clusterScopedKinds";
  private static final String NAMESPACE = "namespace";

  /** The audited apiserver for classes that ask for its log, else the JVM's shared one. */
  private static KubeApiServer server(ExtensionContext context) {
    boolean audited = context.getTestClass()
        .flatMap(c -> AnnotationSupport.findAnnotation(c, KubeApiTest.class))
        .map(KubeApiTest::auditLog).orElse(false);
    return audited ? KubeApiServer.sharedAudited() : KubeApiServer.shared();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    KubeApiServer server = server(context);
    KubeApiTest annotation = AnnotationSupport.findAnnotation(context.getRequiredTestClass(), KubeApiTest.class)
        .orElse(null);
    List<CustomResourceDefinition> crds = new ArrayList<>();
    if (annotation != null) {
      crds.addAll(CrdInstaller.load(annotation.crds()));
      crds.addAll(CrdInstaller.load(Arrays.stream(annotation.thirdPartyCrds())
          .map(ThirdPartyCrd::resource).toArray(String[]::new)));
    }
    CrdInstaller.install(server.adminClient(), crds);
    List<ResourceDefinitionContext> clusterScoped = crds.stream()
        .filter(crd -> "Cluster".equals(crd.getSpec().getScope()))
        .map(CrdInstaller::context)
        .toList();
    context.getStore(STORE).put(CLUSTER_SCOPED_KINDS, clusterScoped);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    KubernetesClient admin = server(context).adminClient();
    String name = namespaceName(context.getRequiredTestClass().getSimpleName(),
        context.getTestMethod().map(m -> m.getName()).orElse("test"));
    Namespace namespace = admin.namespaces().resource(new NamespaceBuilder()
        .withNewMetadata()
        .withName(name)
        .addToLabels(TEST_NAMESPACE_LABEL, "true")
        .addToAnnotations("ipam-operators.org/test", context.getDisplayName())
        .endMetadata()
        .build()).create();
    context.getStore(STORE).put(NAMESPACE, namespace);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    KubernetesClient admin = server(context).adminClient();
    RuntimeException failure = null;
    @SuppressWarnings("unchecked")
    List<ResourceDefinitionContext> clusterScoped =
        context.getStore(STORE).getOrDefault(CLUSTER_SCOPED_KINDS, List.class, List.of());
    for (ResourceDefinitionContext kind : clusterScoped) {
      try {
        deleteAll(admin, kind);
      } catch (RuntimeException e) {
        failure = accumulate(failure, e);
      }
    }
    Namespace namespace = context.getStore(STORE).remove(NAMESPACE, Namespace.class);
    if (namespace != null) {
      try {
        // Without a namespace controller the namespace stays Terminating, which still refuses new objects in it.
        admin.namespaces().withName(namespace.getMetadata().getName()).delete();
      } catch (RuntimeException e) {
        failure = accumulate(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == KubernetesClient.class || type == Namespace.class || type == KubeApiServer.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    if (type == KubeApiServer.class) {
      return server(extensionContext);
    }
    Namespace namespace = extensionContext.getStore(STORE).get(NAMESPACE, Namespace.class);
    if (namespace == null) {
      throw new ParameterResolutionException(type.getSimpleName()
          + " is only available in test methods and @BeforeEach/@AfterEach (a namespace exists per test)");
    }
    if (type == Namespace.class) {
      return namespace;
    }
    // Shares the admin client's HTTP client; closing it is neither needed nor harmful to other tests.
    return server(extensionContext).adminClient().adapt(io.fabric8.kubernetes.client.NamespacedKubernetesClient.class)
        .inNamespace(namespace.getMetadata().getName());
  }

  /**
   * A DNS-1123 label from the test's class and method plus a random suffix, at most 63 characters:
   * {@code <class>-<method>-<6 hex>} in lower case.
   */
  public static String namespaceName(String className, String methodName) {
    String base = (abbreviate(className, 20) + "-" + abbreviate(methodName, 34));
    String suffix = String.format("%06x", ThreadLocalRandom.current().nextInt(0x1000000));
    return base.replaceAll("-+", "-").replaceAll("^-|-$", "") + "-" + suffix;
  }

  private static String abbreviate(String name, int max) {
    String label = name.replaceAll("([A-Z])([A-Z][a-z])", "$1-$2").replaceAll("([a-z0-9])([A-Z])", "$1-$2")
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^a-z0-9-]", "-").replaceAll("-+", "-").replaceAll("^-|-$", "");
    return label.length() <= max ? label : label.substring(0, max).replaceAll("-$", "");
  }

  private static void deleteAll(KubernetesClient admin, ResourceDefinitionContext kind) {
    var resources = admin.genericKubernetesResources(kind);
    for (GenericKubernetesResource item : resources.list().getItems()) {
      var resource = resources.withName(item.getMetadata().getName());
      try {
        if (item.getMetadata().getFinalizers() != null && !item.getMetadata().getFinalizers().isEmpty()) {
          resource.patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
        }
        resource.delete();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404) {
          throw e;
        }
      }
    }
    LOG.debug("Deleted all {} after the test", kind.getPlural());
  }

  private static RuntimeException accumulate(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }
}
