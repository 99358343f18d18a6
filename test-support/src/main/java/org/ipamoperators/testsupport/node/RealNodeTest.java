package org.ipamoperators.testsupport.node;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test class on this machine's real one-node Kubernetes ({@link RealNode#shared()}: one per
 * test JVM, behind a machine-wide lock, torn down at the end of the run with every host setting restored).
 *
 * <p>Before the first test the image tars named by {@link #imageProperties()} are imported into the node. Each
 * test gets a fresh namespace (deleted afterwards; the node has a namespace controller, so it really goes) and
 * may declare parameters of these types:
 * <ul>
 *   <li>{@link io.fabric8.kubernetes.client.KubernetesClient}: cluster-admin, defaulting to the test's namespace;</li>
 *   <li>{@link io.fabric8.kubernetes.api.model.Namespace}: the test's namespace;</li>
 *   <li>{@link RealNode}: the node, for its kubeconfig, kubectl, images and diagnostics.</li>
 * </ul>
 * A failing test gets the node's pods, events and kubelet log attached to its failure.
 *
 * <p>Needs root: without it the tests are aborted (skipped) with the reason. As root, missing binaries or images
 * fail the tests with the command that prepares them.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RealNodeExtension.class)
public @interface RealNodeTest {

  /**
   * System properties whose values are image tars to import into the node, e.g. {@code "ipam.image.tar"}. A
   * property that is not set aborts the class's tests (no image was built), naming the property.
   */
  String[] imageProperties() default {};
}
