package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code ipam --version} says the version this build made, not a number written in the code. */
class IpamVersionTest {
  /** The Maven project's version, passed by surefire (distribution/pom.xml). */
  private static final String PROJECT_VERSION = System.getProperty("ipam.project.version");

  @Test
  void versionIsTheMavenProjectVersion() {
    assertThat(PROJECT_VERSION).as("surefire passes ${project.version} as ipam.project.version")
        .isNotBlank().doesNotContain("${");
    IpamRun r = IpamRun.of("--version");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out().strip()).isEqualTo("ipam " + PROJECT_VERSION);
  }
}
