package org.ipamoperators.testsupport.moto;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test class against this JVM's moto server ({@link MotoServer#shared()}), reset before each
 * test. Test methods may declare parameters of type {@link software.amazon.awssdk.services.ec2.Ec2Client}
 * (closed after the test) and {@link MotoServer}.
 *
 * <p>Without moto the tests fail with a message pointing at {@code scripts/test-env.sh}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(MotoExtension.class)
public @interface MotoTest {
}
