package org.ipamoperators.cli.operator;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.ipamoperators.cli.StartFailure;
import org.ipamoperators.cli.operator.OperatorControllers.RequiredCrd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code ipam operator} checks on the cluster before it starts a controller: the API answers, the CRDs are
 * served (installed first with {@code --install-crds}) and may be listed, the Lease's namespace exists. Each
 * failure is one {@link StartFailure} line.
 */
final class StartupChecks {
  private static final Logger LOG = LoggerFactory.getLogger(StartupChecks.class);
  /** Start-up checks answered 429 or 5xx are tried this often (about 30 s in all) before giving up. */
  private static final int START_ATTEMPTS = 6;

  private final List<RequiredCrd> crds;
  private final boolean installCrds;
  /** The namespace of the leader-election Lease, or null without leader election. */
  private final String leaseNamespace;
  private final BooleanSupplier stopping;

  StartupChecks(List<RequiredCrd> crds, boolean installCrds, String leaseNamespace, BooleanSupplier stopping) {
    this.crds = crds;
    this.installCrds = installCrds;
    this.leaseNamespace = leaseNamespace;
    this.stopping = stopping;
  }

  /** The client configuration from {@code --kubeconfig}, else the usual places; a bad one exits 2. */
  static Config clientConfig(Path kubeconfig) throws StartFailure {
    if (kubeconfig != null) {
      if (!Files.isRegularFile(kubeconfig) || !Files.isReadable(kubeconfig)) {
        throw new StartFailure(2, "cannot read kubeconfig " + kubeconfig);
      }
      Config c;
      try {
        c = Config.fromKubeconfig(kubeconfig.toFile());
      } catch (RuntimeException e) {
        throw new StartFailure(2, "kubeconfig " + kubeconfig + " is not usable: " + StartFailure.describe(e), e);
      }
      if (c.getCurrentContext() == null) {
        throw new StartFailure(2, "kubeconfig " + kubeconfig + " has no current context");
      }
      return c;
    }
    try {
      return Config.autoConfigure(null);
    } catch (RuntimeException e) {
      throw new StartFailure(2, "cannot configure the Kubernetes client: " + StartFailure.describe(e), e);
    }
  }

  /**
   * The start-up checks, with a client that fails fast. A busy apiserver answers 429 or 5xx for a moment: that is
   * no reason to crash-loop. Wrong input (unreachable URL, missing CRD, RBAC) still fails at once with its one line.
   */
  void run(Config config) throws StartFailure {
    try (KubernetesClient probe = new KubernetesClientBuilder().withConfig(probeConfig(config)).build()) {
      for (int attempt = 1; ; attempt++) {
        try {
          runOnce(probe, config.getMasterUrl());
          return;
        } catch (StartFailure e) {
          if (attempt >= START_ATTEMPTS || !StartFailure.isTransient(e) || stopping.getAsBoolean()) {
            throw e;
          }
          LOG.warn("start-up check failed ({}), attempt {} of {}; retrying", e.getMessage(), attempt, START_ATTEMPTS);
          try {
            Thread.sleep(startRetryDelayMillis(attempt));
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw e;
          }
        }
      }
    }
  }

  /** The wait after the given failed attempt: doubling from 1 s, at most 8 s. */
  static long startRetryDelayMillis(int attempt) {
    return Math.min(8_000L, 500L << attempt);
  }

  private void runOnce(KubernetesClient probe, String url) throws StartFailure {
    checkReachable(probe, url);
    if (installCrds) {
      installCrds(probe);
    }
    checkCrds(probe);
    if (leaseNamespace != null) {
      checkLeaseNamespace(probe);
    }
  }

  /** Start-up checks fail fast: no retries, short timeouts. */
  private static Config probeConfig(Config config) {
    return new ConfigBuilder(config)
        .withRequestRetryBackoffLimit(0)
        .withConnectionTimeout(10_000)
        .withRequestTimeout(15_000)
        .build();
  }

  private static void checkReachable(KubernetesClient probe, String url) throws StartFailure {
    try {
      probe.getKubernetesVersion();
    } catch (RuntimeException e) {
      throw new StartFailure(1, "cannot reach the Kubernetes API at " + url + ": " + StartFailure.describe(e), e);
    }
  }

  private void installCrds(KubernetesClient probe) throws StartFailure {
    for (RequiredCrd crd : crds) {
      CustomResourceDefinition def;
      try (InputStream in = StartupChecks.class.getClassLoader().getResourceAsStream(crd.resource())) {
        if (in == null) {
          throw new StartFailure(1, "the CRD " + crd.name() + " is not in this build (" + crd.resource() + " missing)");
        }
        def = probe.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
      } catch (IOException e) {
        throw new StartFailure(1, "cannot read " + crd.resource() + ": " + e.getMessage(), e);
      }
      try {
        probe.apiextensions().v1().customResourceDefinitions().resource(def)
            .fieldManager(OperatorCommand.FIELD_MANAGER).forceConflicts().serverSideApply();
        probe.apiextensions().v1().customResourceDefinitions().withName(crd.name()).waitUntilCondition(
            c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null
                && c.getStatus().getConditions().stream()
                    .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())),
            60, TimeUnit.SECONDS);
      } catch (RuntimeException e) {
        throw new StartFailure(1, "cannot install the CRD " + crd.name() + ": " + StartFailure.describe(e), e);
      }
      LOG.info("CRD {} applied and established", crd.name());
    }
  }

  /** Lists one object of each kind: proves the CRD is served and that we may list it. */
  private void checkCrds(KubernetesClient probe) throws StartFailure {
    for (RequiredCrd crd : crds) {
      try {
        probe.resources(crd.type()).inAnyNamespace().list(new ListOptionsBuilder().withLimit(1L).build());
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          throw new StartFailure(1, "the CRD " + crd.name() + " is not installed in the cluster at "
              + probe.getConfiguration().getMasterUrl()
              + " (apply the CRDs shipped with ipam, or run with --install-crds)", e);
        }
        if (e.getCode() == 401 || e.getCode() == 403) {
          throw new StartFailure(1, "not allowed to list " + crd.name() + " (" + StartFailure.describe(e)
              + "); check the operator's RBAC", e);
        }
        throw new StartFailure(1, "cannot list " + crd.name() + ": " + StartFailure.describe(e), e);
      }
    }
  }

  private void checkLeaseNamespace(KubernetesClient probe) throws StartFailure {
    try {
      if (probe.namespaces().withName(leaseNamespace).get() == null) {
        throw new StartFailure(1, "the namespace " + leaseNamespace + " for the leader-election Lease does not exist"
            + " (create it, or choose another with --namespace)");
      }
    } catch (KubernetesClientException e) {
      throw new StartFailure(1, "cannot read the namespace " + leaseNamespace + " for the leader-election Lease: "
          + StartFailure.describe(e), e);
    }
  }
}
