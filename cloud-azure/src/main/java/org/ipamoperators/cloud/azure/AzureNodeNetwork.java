package org.ipamoperators.cloud.azure;

import com.azure.core.credential.TokenCredential;
import com.azure.core.http.HttpClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link NodeNetwork} on Azure: egress addresses are secondary static ipConfigurations of the
 * primary NIC of the VM a node's {@code spec.providerID} names, in the subnet of the NIC's primary
 * ipConfiguration, optionally in its load-balancer backend pools ({@link LoadBalancerPolicy}).
 *
 * <p>Azure has no call for one ipConfiguration: a NIC changes by a PUT of its whole body. Every
 * change of a pass for one NIC goes into one PUT, sent only when the NIC's configurations differ
 * from what is wanted, with {@code If-Match} on the etag of the GET it was computed from, and
 * followed to the end of its long-running operation. Configurations this operator did not create
 * (see {@link NicEdit}) are sent back as they came, the primary included.
 *
 * <p>Azure never lets an address be on two NICs, so a move cannot be make-before-break: the source
 * NIC's PUT (and its operation) completes before the target's PUT starts; the time in between is
 * recorded ({@code ipam_azure_move_gap_seconds}) and is the gap during which the address is on no
 * NIC (two NIC operations, seconds to tens of seconds on Azure).
 *
 * <p>Conflicts ({@code PrivateIPAddressIsAllocated}, a stale etag, {@code AnotherOperationInProgress},
 * a dependency still {@code Updating}) are retried here with exponential backoff and a fresh GET;
 * which address is taken, and by what, comes from {@code CheckIPAddressAvailability} and the VNet's
 * expanded subnets, never from Azure's message text;
 * throttling (429 with {@code Retry-After}) and 5xx are retried by the SDK's pipeline first. One
 * NIC's failure never stops another's; each failure names the call, the node, the NIC and Azure's
 * error code.
 */
public final class AzureNodeNetwork implements NodeNetwork, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AzureNodeNetwork.class);

  private final ArmAccess arm;
  private final LoadBalancerPolicy policy;
  private final NicReads nics;
  private final VnetReads vnets;
  private final LoadBalancerPools loadBalancerPools;

  public AzureNodeNetwork(AzureSettings settings, AzureClients.Clients clients, MeterRegistry registry, Clock clock) {
    this(new ArmAccess(clients, settings, new AzureNetworkState(new AzureMetrics(registry), clock)),
        settings.loadBalancerPolicy());
  }

  private AzureNodeNetwork(ArmAccess arm, LoadBalancerPolicy policy) {
    this.arm = arm;
    this.policy = policy;
    this.nics = new NicReads(arm);
    this.vnets = new VnetReads(arm);
    this.loadBalancerPools = new LoadBalancerPools(arm, policy);
  }

  /** With the JDK HTTP client, the credential chain of {@link AzureClients#credential} and the global registry. */
  public static AzureNodeNetwork create(AzureSettings settings) {
    return create(settings, AzureClients.credential(settings), AzureClients.jdkHttpClient(), Metrics.globalRegistry);
  }

  public static AzureNodeNetwork create(AzureSettings settings, TokenCredential credential, HttpClient http,
      MeterRegistry registry) {
    return new AzureNodeNetwork(settings, AzureClients.build(settings, credential, http), registry, Clock.systemUTC());
  }

  /** The same network (same nodes, same locks) with another load-balancer policy for this caller's changes. */
  public AzureNodeNetwork withLoadBalancerPolicy(LoadBalancerPolicy p) {
    return p == policy ? this : new AzureNodeNetwork(arm, p);
  }

  /** The policy the old operator's EgressIPAM annotation ({@link LoadBalancerPolicy#ANNOTATION}) chooses. */
  @Override
  public AzureNodeNetwork configuredBy(java.util.Map<String, String> annotations) {
    return withLoadBalancerPolicy(LoadBalancerPolicy.fromAnnotation(annotations.get(LoadBalancerPolicy.ANNOTATION)));
  }

  public AzureSettings settings() {
    return arm.settings();
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(false, true, true, true, true);
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    return nics.describe(node);
  }

  /**
   * Every address any ipConfiguration of the subnets overlapping {@code range} holds (NICs, load
   * balancer frontends, private endpoints: the VNet GET with {@code $expand=subnets/ipConfigurations}),
   * plus the five Azure reserves in each subnet prefix (the first four and the last). No subnet for
   * the range, a failed call, or an ipConfiguration whose address is not given is an exception,
   * never an empty or partial set.
   */
  @Override
  public Set<Ip> addressesInUse(IpRange range) throws NodeNetworkException {
    return vnets.addressesInUse(range);
  }

  // ------------------------------------------------------------------ apply

  /** The changes of one NIC in one pass. */
  private static final class Work {
    final String node;
    final Map<Ip, Integer> add = new LinkedHashMap<>();
    final Map<Ip, Integer> remove = new LinkedHashMap<>();
    final Map<Ip, Integer> moveOut = new LinkedHashMap<>();
    final Map<Ip, Integer> moveIn = new LinkedHashMap<>();

    Work(String node) {
      this.node = node;
    }
  }

  /**
   * Per NIC, one PUT with every change. NICs that give an address to another NIC (moves) go first
   * and complete before the NICs that receive it; a NIC that both gives and receives moved addresses
   * (a swap) is the only one written twice.
   */
  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    ApplyPass pass = new ApplyPass(changes);
    Map<String, Work> work = byNode(changes);
    runAll(giving(work, pass));
    runAll(rest(work, pass));
    return pass.finish();
  }

  private static Map<String, Work> byNode(List<AddressChange> changes) {
    Map<String, Work> work = new LinkedHashMap<>();
    for (int i = 0; i < changes.size(); i++) {
      AddressChange c = changes.get(i);
      switch (c.kind()) {
        case ATTACH -> work.computeIfAbsent(c.toNode(), Work::new).add.put(c.address(), i);
        case DETACH -> work.computeIfAbsent(c.fromNode(), Work::new).remove.put(c.address(), i);
        case MOVE -> {
          work.computeIfAbsent(c.fromNode(), Work::new).moveOut.put(c.address(), i);
          work.computeIfAbsent(c.toNode(), Work::new).moveIn.put(c.address(), i);
        }
        default -> throw new IllegalStateException();
      }
    }
    return work;
  }

  /**
   * The first step: NICs giving moved addresses away, with their removals and plain additions (not
   * what moves in), which are taken out of {@code work}.
   */
  private List<Runnable> giving(Map<String, Work> work, ApplyPass pass) {
    List<Runnable> tasks = new ArrayList<>();
    for (Work w : work.values()) {
      if (w.moveOut.isEmpty()) {
        continue;
      }
      NicState s = arm.state().nodes.get(w.node);
      if (s == null) {
        // not described (its VM gone, say): the target's PUT finds out whether the address is still held
        w.moveOut.keySet().forEach(ip -> pass.released.put(ip, arm.state().clock.instant()));
        pass.notDescribed(w.add, w.node);
        pass.notDescribed(w.remove, w.node);
      } else {
        NicUpdate update = new NicUpdate(arm, loadBalancerPools, vnets, pass, s, merged(w.add, Map.of()),
            merged(w.remove, w.moveOut));
        tasks.add(update::run);
      }
      w.add.clear();
      w.remove.clear();
    }
    return tasks;
  }

  /** The second step: everything else, and what moves in where its source let go. */
  private List<Runnable> rest(Map<String, Work> work, ApplyPass pass) {
    List<Runnable> tasks = new ArrayList<>();
    for (Work w : work.values()) {
      Map<Ip, Integer> in = new LinkedHashMap<>();
      w.moveIn.forEach((ip, i) -> {
        if (pass.results[i] == null) {
          in.put(ip, i);
        }
      });
      if (w.add.isEmpty() && w.remove.isEmpty() && in.isEmpty()) {
        continue;
      }
      NicState s = arm.state().nodes.get(w.node);
      if (s == null) {
        pass.notDescribed(w.add, w.node);
        pass.notDescribed(w.remove, w.node);
        pass.notDescribed(in, w.node);
      } else {
        NicUpdate update = new NicUpdate(arm, loadBalancerPools, vnets, pass, s, merged(w.add, in),
            merged(w.remove, Map.of()));
        tasks.add(update::run);
      }
    }
    return tasks;
  }

  private static Map<Ip, Integer> merged(Map<Ip, Integer> a, Map<Ip, Integer> b) {
    Map<Ip, Integer> out = new LinkedHashMap<>(a);
    out.putAll(b);
    return out;
  }

  private void runAll(List<Runnable> tasks) {
    if (tasks.size() == 1) {
      tasks.get(0).run();
      return;
    }
    List<Future<?>> futures = new ArrayList<>();
    tasks.forEach(t -> futures.add(arm.state().executor.submit(t)));
    for (Future<?> f : futures) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (java.util.concurrent.ExecutionException e) {
        LOG.warn("NIC update failed unexpectedly", e.getCause());
      }
    }
  }

  @Override
  public void close() {
    arm.state().executor.shutdownNow();
  }
}
