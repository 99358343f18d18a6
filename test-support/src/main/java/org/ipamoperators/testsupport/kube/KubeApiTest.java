package org.ipamoperators.testsupport.kube;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test class against this JVM's real kube-apiserver ({@link KubeApiServer#shared()}).
 *
 * <p>Before the first test the CRDs named here are installed and awaited. Each test gets a fresh namespace,
 * deleted afterwards, and may declare parameters of these types:
 * <ul>
 *   <li>{@link io.fabric8.kubernetes.client.KubernetesClient}: cluster-admin, defaulting to the test's namespace;</li>
 *   <li>{@link io.fabric8.kubernetes.api.model.Namespace}: the test's namespace;</li>
 *   <li>{@link KubeApiServer}: the server, for its kubeconfig, for more clients, or for its audit log
 *   ({@link #auditLog()}).</li>
 * </ul>
 * After each test, objects of the cluster-scoped kinds installed here are deleted (finalizers stripped), so
 * tests do not see each other's cluster-scoped objects.
 *
 * <p>Without the binaries the tests fail with a message pointing at {@code scripts/test-env.sh}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(KubeApiExtension.class)
public @interface KubeApiTest {

  /** Classpath resources with CRDs to install, e.g. {@code "META-INF/fabric8/ippools.ipam.example.org-v1.yml"}. */
  String[] crds() default {};

  /** Third-party CRDs (OpenShift, OVN-Kubernetes, Prometheus Operator) to install. */
  ThirdPartyCrd[] thirdPartyCrds() default {};

  /**
   * Runs the class on {@link KubeApiServer#sharedAudited()} instead: an apiserver of its own (one per JVM, shared by
   * the classes that ask for it) that logs every request, read with {@link KubeApiServer#auditEvents(long)}.
   */
  boolean auditLog() default false;
}
