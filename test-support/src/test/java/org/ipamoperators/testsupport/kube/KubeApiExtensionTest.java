package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class KubeApiExtensionTest {

  @Test
  void namespaceNamesAreDns1123LabelsEvenForLongNames() {
    String name = KubeApiExtension.namespaceName("AVeryLongTestClassNameForSomethingIT",
        "someExtremelyLongTestMethodNameThatGoesOnAndOnAndOn_withUnderscores");

    assertThat(name).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?").hasSizeLessThanOrEqualTo(63)
        .startsWith("a-very-long-test-cla-some-extremely-long-test-method");
  }

  @Test
  void namespaceNamesDifferBetweenCalls() {
    assertThat(KubeApiExtension.namespaceName("PoolIT", "allocates"))
        .startsWith("pool-it-allocates-")
        .isNotEqualTo(KubeApiExtension.namespaceName("PoolIT", "allocates"));
  }

  @Test
  void etcdWrapperRewritesWildcardUrlsToLoopback() throws Exception {
    String script = KubeApiServer.etcdWrapper(
        org.ipamoperators.testsupport.OrphanGuard.scriptBody(ProcessHandle.current().pid(), "/usr/bin/etcd"));
    java.nio.file.Path file = java.nio.file.Files.createTempFile("etcd-wrapper", ".sh");
    try {
      java.nio.file.Files.writeString(file, script.replace("exec '/usr/bin/etcd'", "printf '%s\\n'"));
      var result = org.ipamoperators.testsupport.Commands.run("sh", file.toString(), "--listen-client-urls",
          "http://0.0.0.0:2379", "--name", "it's");
      assertThat(result.stdout().lines()).containsExactly("--listen-client-urls", "http://127.0.0.1:2379",
          "--name", "it's");
    } finally {
      java.nio.file.Files.delete(file);
    }
  }
}
