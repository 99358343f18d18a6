package org.ipamoperators.testsupport.netns;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives each test of the annotated class a fresh {@link NetworkLab} parameter, closed after the test whatever
 * its outcome.
 *
 * <p>Network namespaces need root. Without it the tests are aborted (reported as skipped) with the reason; CI runs
 * as root and sets {@code -Dipam.test.requireNetns=true}, which turns the abort into a failure.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(NetnsExtension.class)
public @interface NetnsTest {
}
