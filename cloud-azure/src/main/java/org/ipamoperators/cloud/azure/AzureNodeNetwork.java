package org.ipamoperators.cloud.azure;

import com.azure.core.credential.TokenCredential;
import com.azure.core.http.HttpClient;
import com.azure.core.util.Context;
import com.azure.resourcemanager.compute.fluent.models.VirtualMachineInner;
import com.azure.resourcemanager.compute.models.NetworkInterfaceReference;
import com.azure.resourcemanager.network.fluent.models.BackendAddressPoolInner;
import com.azure.resourcemanager.network.fluent.models.IpConfigurationInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import com.azure.resourcemanager.network.fluent.models.SubnetInner;
import com.azure.resourcemanager.network.fluent.models.VirtualNetworkInner;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
  private static final Duration SUBNET_TTL = Duration.ofMinutes(5);
  private static final Pattern SUBNET_ID = Pattern.compile(
      "^/subscriptions/[^/]+/resourceGroups/([^/]+)/providers/Microsoft\\.Network/virtualNetworks/([^/]+)/subnets/([^/]+)$",
      Pattern.CASE_INSENSITIVE);

  private final AzureClients.Clients clients;
  private final AzureSettings settings;
  private final LoadBalancerPolicy policy;
  private final Shared shared;

  /** State shared by the views of one network (one per load-balancer policy). */
  private static final class Shared {
    final Map<String, NicState> nodes = new ConcurrentHashMap<>();
    final Map<String, Object> nicLocks = new ConcurrentHashMap<>();
    final Map<String, CachedSubnet> subnets = new ConcurrentHashMap<>();
    final Set<String> outboundPools = ConcurrentHashMap.newKeySet();
    final ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "azure-nic");
      t.setDaemon(true);
      return t;
    });
    final AzureMetrics metrics;
    final Clock clock;
    volatile VnetList vnetList;

    Shared(AzureMetrics metrics, Clock clock) {
      this.metrics = metrics;
      this.clock = clock;
    }
  }

  private record CachedSubnet(List<IpRange> blocks, Instant expires) {}

  /** VNet ids and their subnets' prefixes. */
  private record VnetList(Map<String, List<IpRange>> vnets, Instant expires) {}

  /** What {@link #describe} found of a node, updated after each PUT of its NIC. */
  static final class NicState {
    final String node;
    final String vmId;
    final AzureIds.Id nic;
    final String subnetId;
    final List<IpRange> blocks;
    volatile NetworkInterfaceInner body;
    /** A Uniform scale set's instance: its NIC is read-only (the set's model decides it). */
    volatile boolean uniformScaleSet;

    NicState(String node, String vmId, AzureIds.Id nic, String subnetId, List<IpRange> blocks, NetworkInterfaceInner body) {
      this.node = node;
      this.vmId = vmId;
      this.nic = nic;
      this.subnetId = subnetId;
      this.blocks = blocks;
      this.body = body;
    }

    String where() {
      return "NIC " + nic.name() + " of node " + node + " (VM " + AzureIds.last(vmId) + ")";
    }
  }

  public AzureNodeNetwork(AzureSettings settings, AzureClients.Clients clients, MeterRegistry registry, Clock clock) {
    this(settings, clients, settings.loadBalancerPolicy(), new Shared(new AzureMetrics(registry), clock));
  }

  private AzureNodeNetwork(AzureSettings settings, AzureClients.Clients clients, LoadBalancerPolicy policy,
      Shared shared) {
    this.settings = settings;
    this.clients = clients;
    this.policy = policy;
    this.shared = shared;
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
    return p == policy ? this : new AzureNodeNetwork(settings, clients, p, shared);
  }

  /** The policy the old operator's EgressIPAM annotation ({@link LoadBalancerPolicy#ANNOTATION}) chooses. */
  @Override
  public AzureNodeNetwork configuredBy(java.util.Map<String, String> annotations) {
    return withLoadBalancerPolicy(LoadBalancerPolicy.fromAnnotation(annotations.get(LoadBalancerPolicy.ANNOTATION)));
  }

  public AzureSettings settings() {
    return settings;
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(false, true, true, true, true);
  }

  private <T> T call(String name, java.util.function.Supplier<T> body) {
    return ArmCallFailed.call(name, shared.metrics, body);
  }

  // ------------------------------------------------------------------ describe

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    if (AzureIds.isScaleSet(node.providerId())) {
      return describeUniformInstance(node);
    }
    AzureIds.Id vm = AzureIds.vmOfProviderId(node.providerId()).orElseThrow(() -> new NodeNetworkException(node.name(),
        "InvalidProviderID", "spec.providerID '" + node.providerId() + "' names no Azure VM (expected azure:///"
        + "subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>)", false, null));
    try {
      VirtualMachineInner v = call("GetVirtualMachine", () -> clients.compute().getVirtualMachines()
          .getByResourceGroup(vm.resourceGroup(), vm.name()));
      List<NetworkInterfaceReference> refs = v.networkProfile() == null || v.networkProfile().networkInterfaces() == null
          ? List.of() : v.networkProfile().networkInterfaces();
      NetworkInterfaceReference primaryRef = refs.size() == 1 ? refs.get(0) : refs.stream()
          .filter(r -> Boolean.TRUE.equals(r.primary())).findFirst().orElseThrow(() -> new ArmCallFailed(
              "GetVirtualMachine", 200, "NoPrimaryNetworkInterface", "VM " + vm.name() + " has " + refs.size()
              + " network interfaces and none is primary", false));
      AzureIds.Id nicId = AzureIds.parse(primaryRef.id()).orElseThrow(() -> new ArmCallFailed("GetVirtualMachine", 200,
          "InvalidResourceId", "VM " + vm.name() + " names NIC '" + primaryRef.id() + "'", false));
      NetworkInterfaceInner nic = getNic(nicId);
      NetworkInterfaceIpConfigurationInner primary = primaryConfig(nic).orElseThrow(() -> new ArmCallFailed(
          "GetNetworkInterface", 200, "NoPrimaryIpConfiguration", "NIC " + nicId.name() + " has no primary "
          + "ipConfiguration", false));
      String subnetId = primary.subnet() == null ? null : primary.subnet().id();
      if (subnetId == null) {
        throw new ArmCallFailed("GetNetworkInterface", 200, "NoSubnet", "the primary ipConfiguration of NIC "
            + nicId.name() + " names no subnet", false);
      }
      List<IpRange> blocks = subnetBlocks(subnetId);
      NicState state = new NicState(node.name(), v.id() == null ? vm.id() : v.id(), nicId, subnetId, blocks, nic);
      shared.nodes.put(node.name(), state);
      return attachment(state);
    } catch (ArmCallFailed f) {
      shared.nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for VM " + vm.name() + ": " + f.getMessage(),
          f.retryable, f);
    }
  }

  /**
   * A Uniform scale set's instance: its NIC, read under the instance, is described (addresses,
   * subnet) with no room, because its configurations come from the scale set's model and no NIC
   * PUT can change them. (A Flexible scale set's VMs are ordinary VMs: the providerID names them
   * as such and they are handled like any VM.)
   */
  private NodeAttachment describeUniformInstance(NodeRef node) throws NodeNetworkException {
    AzureIds.ScaleSetVm vm = AzureIds.scaleSetVmOfProviderId(node.providerId()).orElseThrow(() ->
        new NodeNetworkException(node.name(), "InvalidProviderID", "spec.providerID '" + node.providerId()
            + "' names no scale-set instance (expected azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/"
            + "Microsoft.Compute/virtualMachineScaleSets/<set>/virtualMachines/<instance>)", false, null));
    try {
      var v = call("GetVirtualMachineScaleSetVM", () -> clients.compute().getVirtualMachineScaleSetVMs()
          .get(vm.resourceGroup(), vm.scaleSet(), vm.instanceId()));
      List<NetworkInterfaceReference> refs = v.networkProfile() == null || v.networkProfile().networkInterfaces() == null
          ? List.of() : v.networkProfile().networkInterfaces();
      NetworkInterfaceReference primaryRef = refs.size() == 1 ? refs.get(0) : refs.stream()
          .filter(r -> Boolean.TRUE.equals(r.primary())).findFirst().orElseThrow(() -> new ArmCallFailed(
              "GetVirtualMachineScaleSetVM", 200, "NoPrimaryNetworkInterface", "instance " + vm.instanceId()
              + " of scale set " + vm.scaleSet() + " has " + refs.size() + " network interfaces and none is primary",
              false));
      AzureIds.Id nicId = vm.nic(AzureIds.last(primaryRef.id()));
      NetworkInterfaceInner nic = call("GetNetworkInterface", () -> clients.network().getNetworkInterfaces()
          .getVirtualMachineScaleSetNetworkInterface(vm.resourceGroup(), vm.scaleSet(), vm.instanceId(), nicId.name()));
      String subnetId = primaryConfig(nic).map(c -> c.subnet() == null ? null : c.subnet().id()).orElseThrow(() ->
          new ArmCallFailed("GetNetworkInterface", 200, "NoSubnet", "the NIC of instance " + vm.instanceId()
              + " of scale set " + vm.scaleSet() + " has no primary ipConfiguration with a subnet", false));
      NicState state = new NicState(node.name(), vm.id(), nicId, subnetId, subnetBlocks(subnetId), nic);
      state.uniformScaleSet = true;
      shared.nodes.put(node.name(), state);
      return attachment(state);
    } catch (ArmCallFailed f) {
      shared.nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for instance " + vm.instanceId() + " of scale set "
          + vm.scaleSet() + ": " + f.getMessage(), f.retryable, f);
    }
  }

  private NodeAttachment attachment(NicState s) {
    List<NetworkInterfaceIpConfigurationInner> cfgs = configs(s.body);
    Ip primary = null;
    Set<Ip> secondaries = ConcurrentHashMap.newKeySet();
    Set<Ip> marked = new HashSet<>();
    int foreign = 0;
    for (NetworkInterfaceIpConfigurationInner c : cfgs) {
      Optional<Ip> ip = NicEdit.address(c);
      if (NicEdit.isPrimary(c, cfgs.size())) {
        primary = ip.orElse(null);
      } else {
        ip.ifPresent(secondaries::add);
        if (!NicEdit.owned(c)) {
          foreign++;
        } else {
          ip.ifPresent(marked::add); // named as ours: the only configurations this network removes
        }
      }
    }
    // the limit counts every ipConfiguration, the primary too; other tools' take slots for good
    int capacity = s.uniformScaleSet ? 0 : Math.max(0, settings.ipConfigurationsPerNic() - 1 - foreign);
    return new NodeAttachment(s.node, s.nic.id(), s.blocks, primary, secondaries, capacity, marked);
  }

  private static List<NetworkInterfaceIpConfigurationInner> configs(NetworkInterfaceInner nic) {
    return nic.ipConfigurations() == null ? List.of() : nic.ipConfigurations();
  }

  private static Optional<NetworkInterfaceIpConfigurationInner> primaryConfig(NetworkInterfaceInner nic) {
    List<NetworkInterfaceIpConfigurationInner> cfgs = configs(nic);
    return cfgs.stream().filter(c -> NicEdit.isPrimary(c, cfgs.size())).findFirst();
  }

  private NetworkInterfaceInner getNic(AzureIds.Id nicId) {
    return call("GetNetworkInterface", () -> clients.network().getNetworkInterfaces()
        .getByResourceGroup(nicId.resourceGroup(), nicId.name()));
  }

  private List<IpRange> subnetBlocks(String subnetId) {
    Instant now = shared.clock.instant();
    CachedSubnet cached = shared.subnets.get(subnetId.toLowerCase(java.util.Locale.ROOT));
    if (cached != null && now.isBefore(cached.expires())) {
      return cached.blocks();
    }
    Matcher m = SUBNET_ID.matcher(subnetId);
    if (!m.matches()) {
      throw new ArmCallFailed("GetSubnet", 0, "InvalidResourceId", "not a subnet id: " + subnetId, false);
    }
    SubnetInner s = call("GetSubnet", () -> clients.network().getSubnets().get(m.group(1), m.group(2), m.group(3)));
    List<IpRange> blocks = prefixes(s);
    shared.subnets.put(subnetId.toLowerCase(java.util.Locale.ROOT), new CachedSubnet(blocks, now.plus(SUBNET_TTL)));
    return blocks;
  }

  private static List<IpRange> prefixes(SubnetInner s) {
    List<IpRange> out = new ArrayList<>();
    if (s.addressPrefix() != null) {
      out.add(IpRange.parse(s.addressPrefix()));
    }
    if (s.addressPrefixes() != null) {
      s.addressPrefixes().stream().map(IpRange::parse).filter(r -> !out.contains(r)).forEach(out::add);
    }
    return out;
  }

  // ------------------------------------------------------------------ addresses in use

  /**
   * Every address any ipConfiguration of the subnets overlapping {@code range} holds (NICs, load
   * balancer frontends, private endpoints: the VNet GET with {@code $expand=subnets/ipConfigurations}),
   * plus the five Azure reserves in each subnet prefix (the first four and the last). No subnet for
   * the range, a failed call, or an ipConfiguration whose address is not given is an exception,
   * never an empty or partial set.
   */
  @Override
  public Set<Ip> addressesInUse(IpRange range) throws NodeNetworkException {
    try {
      List<String> holding = vnetsOverlapping(range);
      if (holding.isEmpty()) {
        String rg = settings.vnetResourceGroup();
        throw new ArmCallFailed("ListVirtualNetworks", 200, "NoSubnetForCidr", "no subnet of "
            + (rg == null ? "the subscription" : "resource group " + rg) + " holds or overlaps " + range, false);
      }
      Set<Ip> used = new TreeSet<>();
      for (String vnetId : holding) {
        addInUse(vnetId, range, used);
      }
      used.removeIf(ip -> !range.contains(ip));
      return used;
    } catch (ArmCallFailed f) {
      throw new NodeNetworkException(range.toString(), f.code, f.describe(), f.retryable, f);
    }
  }

  /**
   * Which VNets have a subnet overlapping the range: the listing is cached (subnets rarely change)
   * and made again when it names none; what the subnets hold is always read fresh.
   */
  private List<String> vnetsOverlapping(IpRange range) {
    VnetList listed = shared.vnetList;
    List<String> holding = listed == null || !shared.clock.instant().isBefore(listed.expires()) ? List.of()
        : overlapping(listed.vnets(), range);
    if (!holding.isEmpty()) {
      return holding;
    }
    String rg = settings.vnetResourceGroup();
    List<VirtualNetworkInner> vnets = call("ListVirtualNetworks", () -> (rg == null
        ? clients.network().getVirtualNetworks().list()
        : clients.network().getVirtualNetworks().listByResourceGroup(rg)).stream().toList());
    Map<String, List<IpRange>> byId = new LinkedHashMap<>();
    for (VirtualNetworkInner v : vnets) {
      List<IpRange> all = new ArrayList<>();
      (v.subnets() == null ? List.<SubnetInner>of() : v.subnets()).forEach(s -> all.addAll(prefixes(s)));
      byId.put(v.id(), all);
    }
    shared.vnetList = new VnetList(byId, shared.clock.instant().plus(SUBNET_TTL));
    return overlapping(byId, range);
  }

  /** Adds what the VNet's subnets overlapping the range hold: Azure's reserves and every ipConfiguration. */
  private void addInUse(String vnetId, IpRange range, Set<Ip> used) {
    AzureIds.Id id = AzureIds.parse(vnetId).orElseThrow();
    VirtualNetworkInner full = call("GetVirtualNetwork", () -> clients.network().getVirtualNetworks()
        .getByResourceGroupWithResponse(id.resourceGroup(), id.name(), "subnets/ipConfigurations", Context.NONE)
        .getValue());
    for (SubnetInner s : full.subnets() == null ? List.<SubnetInner>of() : full.subnets()) {
      List<IpRange> blocks = prefixes(s).stream().filter(b -> b.family() == range.family() && b.overlaps(range))
          .toList();
      if (blocks.isEmpty()) {
        continue;
      }
      blocks.forEach(b -> used.addAll(NicChanges.reserved(b)));
      for (IpConfigurationInner c : s.ipConfigurations() == null ? List.<IpConfigurationInner>of()
          : s.ipConfigurations()) {
        if (c.privateIpAddress() == null) {
          throw new ArmCallFailed("GetVirtualNetwork", 200, "AddressNotExpanded", "subnet " + s.name()
              + " lists " + c.id() + " without its address: what it holds is unknown", true);
        }
        used.add(Ip.parse(c.privateIpAddress()));
      }
    }
  }

  private static List<String> overlapping(Map<String, List<IpRange>> vnets, IpRange range) {
    return vnets.entrySet().stream().filter(e -> e.getValue().stream()
        .anyMatch(b -> b.family() == range.family() && b.overlaps(range))).map(Map.Entry::getKey).toList();
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

  /** One {@link #apply} call: its changes, their results as they are settled, when moved addresses left their NIC. */
  private static final class Pass {
    final List<AddressChange> changes;
    final AddressChangeResult[] results;
    final Map<Ip, Instant> released = new ConcurrentHashMap<>();

    Pass(List<AddressChange> changes) {
      this.changes = changes;
      this.results = new AddressChangeResult[changes.size()];
    }

    /** The changes of a node no describe knows of fail (retryable: the next describe may know it). */
    void notDescribed(Map<Ip, Integer> which, String node) {
      which.forEach((ip, i) -> results[i] = AddressChangeResult.failed(changes.get(i), "NodeNotDescribed", "node "
          + node + " has no known Azure VM (its description failed or was never made)", true));
    }

    List<AddressChangeResult> finish() {
      for (int i = 0; i < results.length; i++) {
        if (results[i] == null) {
          results[i] = AddressChangeResult.failed(changes.get(i), "NotApplied", "no call was made for this change", true);
        }
      }
      return List.of(results);
    }
  }

  /**
   * Per NIC, one PUT with every change. NICs that give an address to another NIC (moves) go first
   * and complete before the NICs that receive it; a NIC that both gives and receives moved addresses
   * (a swap) is the only one written twice.
   */
  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    Pass pass = new Pass(changes);
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
  private List<Runnable> giving(Map<String, Work> work, Pass pass) {
    List<Runnable> tasks = new ArrayList<>();
    for (Work w : work.values()) {
      if (w.moveOut.isEmpty()) {
        continue;
      }
      NicState s = shared.nodes.get(w.node);
      if (s == null) {
        // not described (its VM gone, say): the target's PUT finds out whether the address is still held
        w.moveOut.keySet().forEach(ip -> pass.released.put(ip, shared.clock.instant()));
        pass.notDescribed(w.add, w.node);
        pass.notDescribed(w.remove, w.node);
      } else {
        NicUpdate update = new NicUpdate(pass, s, merged(w.add, Map.of()), merged(w.remove, w.moveOut));
        tasks.add(update::run);
      }
      w.add.clear();
      w.remove.clear();
    }
    return tasks;
  }

  /** The second step: everything else, and what moves in where its source let go. */
  private List<Runnable> rest(Map<String, Work> work, Pass pass) {
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
      NicState s = shared.nodes.get(w.node);
      if (s == null) {
        pass.notDescribed(w.add, w.node);
        pass.notDescribed(w.remove, w.node);
        pass.notDescribed(in, w.node);
      } else {
        NicUpdate update = new NicUpdate(pass, s, merged(w.add, in), merged(w.remove, Map.of()));
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
    tasks.forEach(t -> futures.add(shared.executor.submit(t)));
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

  private Object nicLock(String nicId) {
    return shared.nicLocks.computeIfAbsent(nicId.toLowerCase(java.util.Locale.ROOT), k -> new Object());
  }

  /**
   * One NIC: its removals and additions in one PUT, retried on conflicts; fills the result of every
   * change it was given.
   */
  private final class NicUpdate {
    private final Pass pass;
    private final NicState s;
    private final Map<Ip, Integer> adds;
    private final Map<Ip, Integer> removes;
    private final Set<Ip> dropped = new TreeSet<>();
    private final Set<Ip> present = new HashSet<>(); // on the NIC as read for the last PUT

    NicUpdate(Pass pass, NicState s, Map<Ip, Integer> adds, Map<Ip, Integer> removes) {
      this.pass = pass;
      this.s = s;
      this.adds = adds;
      this.removes = removes;
    }

    void run() {
      if (s.uniformScaleSet) {
        refuseOnScaleSetNic();
        return;
      }
      refuseUnplaceable();
      NicChanges wanted = new NicChanges(pass.changes, removes, adds, s.where(), settings.ipConfigurationsPerNic());
      Duration delay = settings.baseDelay();
      ArmCallFailed last = null;
      for (int attempt = 1; attempt <= settings.maxAttempts(); attempt++) {
        Optional<ArmCallFailed> failure = attempt(wanted, attempt == 1);
        if (failure.isEmpty()) {
          return;
        }
        last = failure.get();
        if (retryAtOnce(last)) {
          continue;
        }
        if (!last.retryable || attempt == settings.maxAttempts()) {
          break;
        }
        sleep(delay);
        delay = delay.multipliedBy(2).compareTo(settings.maxDelay()) > 0 ? settings.maxDelay() : delay.multipliedBy(2);
      }
      if (last != null) {
        failRemaining(last);
      }
    }

    /** Nothing can be written on a Uniform scale set's NIC: what is not already as wanted fails alone. */
    private void refuseOnScaleSetNic() {
      Set<Ip> onNic = new HashSet<>();
      configs(s.body).forEach(c -> NicEdit.address(c).ifPresent(onNic::add));
      for (var e : removes.entrySet()) {
        AddressChange ch = pass.changes.get(e.getValue());
        pass.results[e.getValue()] = !onNic.contains(e.getKey()) && ch.kind() == AddressChange.Kind.DETACH
            ? AddressChangeResult.applied(ch) : scaleSetRefusal(ch, s);
      }
      adds.forEach((ip, i) -> pass.results[i] = scaleSetRefusal(pass.changes.get(i), s));
    }

    /** Checks without a call: what cannot be put on this NIC fails alone instead of failing the whole PUT. */
    private void refuseUnplaceable() {
      for (var it = adds.entrySet().iterator(); it.hasNext(); ) {
        var e = it.next();
        Optional<AddressChangeResult> refused = NicChanges.unplaceable(e.getKey(), pass.changes.get(e.getValue()),
            s.blocks, s.subnetId, s.where());
        if (refused.isPresent()) {
          pass.results[e.getValue()] = refused.get();
          it.remove();
        }
      }
    }

    /**
     * One read, decision and PUT under the NIC's lock; the failure, if any. On the first attempt the
     * body from describe (or this process's last PUT) decides whether anything changes: a NIC already
     * as wanted costs no call. A NIC that changes is read again right before its PUT, so the PUT never
     * carries back a stale copy of other tools' configurations, whether or not Azure enforces the
     * If-Match it also gets.
     */
    private Optional<ArmCallFailed> attempt(NicChanges wanted, boolean first) {
      synchronized (nicLock(s.nic.id())) {
        try {
          if (!first || wanted.wouldChange(configs(s.body), pools(s.body))) {
            s.body = getNic(s.nic);
          }
          NetworkInterfaceInner nic = s.body;
          List<NetworkInterfaceIpConfigurationInner> cfgs = new ArrayList<>(configs(nic));
          NicChanges.Decision d = wanted.decide(cfgs, pass.results, dropped);
          present.clear();
          present.addAll(d.onNic());
          d.results().forEach((i, r) -> pass.results[i] = r);
          d.alreadyGone().forEach(ip -> pass.released.putIfAbsent(ip, shared.clock.instant()));
          NicEdit.Plan plan = NicEdit.plan(cfgs, d.remove(), d.add(), s.subnetId, pools(nic), true);
          if (plan.changed()) {
            NetworkInterfaceInner body = nic.withIpConfigurations(plan.configs());
            Context ctx = PutIfMatchPolicy.context(nic.etag());
            s.body = call("PutNetworkInterface", () -> clients.network().getNetworkInterfaces()
                .createOrUpdate(s.nic.resourceGroup(), s.nic.name(), body, ctx));
          }
          recordApplied(d, plan.changed());
          return Optional.empty();
        } catch (ArmCallFailed f) {
          return Optional.of(f);
        }
      }
    }

    private List<String> pools(NetworkInterfaceInner nic) {
      return NicEdit.wantedPools(primaryConfig(nic).orElse(null), policy, shared.outboundPools);
    }

    /** After the PUT (or none needed): every change in it is applied; a move's time on no NIC is measured. */
    private void recordApplied(NicChanges.Decision d, boolean put) {
      Instant done = shared.clock.instant();
      for (Ip ip : d.remove()) {
        AddressChange ch = pass.changes.get(removes.get(ip));
        if (ch.kind() == AddressChange.Kind.MOVE) {
          pass.released.put(ip, done);
        } else {
          pass.results[removes.get(ip)] = AddressChangeResult.applied(ch);
        }
      }
      for (Ip ip : d.add()) {
        int i = adds.get(ip);
        pass.results[i] = AddressChangeResult.applied(pass.changes.get(i));
        Instant gone = pass.released.get(ip);
        if (gone != null && pass.changes.get(i).kind() == AddressChange.Kind.MOVE && put) {
          Duration gap = Duration.between(gone, done);
          shared.metrics.moveGap(gap);
          LOG.info("{} moved to {}: on no NIC for {} ms", ip, s.where(), gap.toMillis());
        }
      }
    }

    /**
     * Whether a failed PUT is tried again at once: a conflict on one address drops it (it fails alone)
     * or frees it from a stale NIC of this operator's; a pool with an outbound rule is left out.
     */
    private boolean retryAtOnce(ArmCallFailed failure) {
      if ("PrivateIPAddressIsAllocated".equals(failure.code)) {
        return dropConflicts(failure);
      }
      if ("OutboundRuleCannotBeUsedWithBackendAddressPoolThatIsReferencedBySecondaryIpConfigs".equals(failure.code)) {
        return learnOutboundPools(s);
      }
      return false;
    }

    /**
     * After {@code PrivateIPAddressIsAllocated}: which of the addresses this PUT adds are taken, from
     * {@code CheckIPAddressAvailability} and, for those, who holds them from the VNet's expanded
     * subnets (Azure's message is prose, not a contract). A holder that is this operator's own
     * configuration on another NIC is taken off there; every other taken address fails alone. False
     * when no address could be named (the PUT is then retried as a whole).
     */
    private boolean dropConflicts(ArmCallFailed failure) {
      List<Ip> candidates = adds.entrySet().stream().filter(e -> !dropped.contains(e.getKey())
          && !present.contains(e.getKey()) && (pass.results[e.getValue()] == null
          || pass.results[e.getValue()].outcome() != AddressChangeResult.Outcome.FAILED)).map(Map.Entry::getKey)
          .toList();
      Map<Ip, Optional<String>> taken;
      try {
        taken = takenAddresses(s.subnetId, candidates);
      } catch (ArmCallFailed f) {
        LOG.info("could not find which address of {} is allocated elsewhere: {}", s.where(), f.describe());
        return false;
      }
      for (var e : taken.entrySet()) {
        Ip ip = e.getKey();
        Optional<String> holder = e.getValue();
        if (holder.isPresent() && releaseStale(holder.get(), ip, s)) {
          continue; // freed where this operator left it: the next attempt takes it
        }
        int i = adds.get(ip);
        pass.results[i] = AddressChangeResult.failed(pass.changes.get(i), failure.code, "PutNetworkInterface on "
            + s.where() + ": " + ip + " is allocated to " + holder.orElse("no listed resource") + " (Azure: "
            + failure.getMessage() + ")" + (holder.isEmpty() ? "; Azure keeps a released address for minutes before "
            + "it can go to another NIC: the address is on no NIC until then" : ""), true);
        dropped.add(ip);
      }
      return !taken.isEmpty();
    }

    /** After the last attempt: every change still without a result fails with its error. */
    private void failRemaining(ArmCallFailed f) {
      LOG.warn("{} on {}: {} ({})", f.call, s.where(), f.getMessage(), f.code);
      for (int i : adds.values()) {
        if (pass.results[i] == null) {
          pass.results[i] = failed(pass.changes.get(i), f, s);
        }
      }
      for (int i : removes.values()) {
        if (pass.results[i] == null) {
          pass.results[i] = failed(pass.changes.get(i), f, s);
        }
      }
    }
  }

  private static AddressChangeResult scaleSetRefusal(AddressChange c, NicState s) {
    return AddressChangeResult.failed(c, "ScaleSetNicNotWritable", s.where() + " belongs to an instance of a Uniform "
        + "scale set: its ipConfigurations come from the scale set's model and no NIC PUT can change them", false);
  }

  /** The candidates Azure says are not available, each with the id of what holds it when one is listed. */
  private Map<Ip, Optional<String>> takenAddresses(String subnetId, List<Ip> candidates) {
    Matcher m = SUBNET_ID.matcher(subnetId);
    if (!m.matches() || candidates.isEmpty()) {
      return Map.of();
    }
    String rg = m.group(1);
    String vnet = m.group(2);
    List<Ip> taken = new ArrayList<>();
    for (Ip ip : candidates) {
      var answer = call("CheckIPAddressAvailability", () -> clients.network().getVirtualNetworks()
          .checkIpAddressAvailability(rg, vnet, ip.toString()));
      if (answer == null || !Boolean.TRUE.equals(answer.available())) {
        taken.add(ip);
      }
    }
    if (taken.isEmpty()) {
      return Map.of();
    }
    VirtualNetworkInner full = call("GetVirtualNetwork", () -> clients.network().getVirtualNetworks()
        .getByResourceGroupWithResponse(rg, vnet, "subnets/ipConfigurations", Context.NONE).getValue());
    Map<Ip, String> holders = new HashMap<>();
    for (SubnetInner sub : full.subnets() == null ? List.<SubnetInner>of() : full.subnets()) {
      for (IpConfigurationInner c : sub.ipConfigurations() == null ? List.<IpConfigurationInner>of()
          : sub.ipConfigurations()) {
        if (c.privateIpAddress() != null && c.id() != null) {
          holders.put(Ip.parse(c.privateIpAddress()), c.id());
        }
      }
    }
    Map<Ip, Optional<String>> out = new LinkedHashMap<>();
    taken.forEach(ip -> out.put(ip, Optional.ofNullable(holders.get(ip))));
    return out;
  }

  /**
   * After {@code OutboundRuleCannotBeUsed…}: the primary's pools that an outbound rule references,
   * read from the pools themselves. True when one was newly found (retry without it).
   */
  private boolean learnOutboundPools(NicState s) {
    boolean found = false;
    NetworkInterfaceIpConfigurationInner primary = primaryConfig(s.body).orElse(null);
    for (String poolId : NicEdit.wantedPools(primary, policy, shared.outboundPools)) {
      Optional<AzureIds.Id> lb = AzureIds.parse(poolId);
      if (lb.isEmpty()) {
        continue;
      }
      try {
        BackendAddressPoolInner p = call("GetLoadBalancerBackendAddressPool", () -> clients.network()
            .getLoadBalancerBackendAddressPools().get(lb.get().resourceGroup(), lb.get().name(), AzureIds.last(poolId)));
        boolean outbound = p.outboundRule() != null || p.outboundRules() != null && !p.outboundRules().isEmpty();
        if (outbound && shared.outboundPools.add(poolId)) {
          found = true;
          LOG.warn("backend pool {} has an outbound rule: egress ipConfigurations stay out of it (no outbound "
              + "connectivity through it for them)", poolId);
        }
      } catch (ArmCallFailed f) {
        LOG.info("could not read backend pool {}: {}", poolId, f.describe());
      }
    }
    return found;
  }

  /**
   * The address is held by an ipConfiguration of this operator on another NIC (a node whose VM the
   * last pass could not describe, a move whose source was not known): take it off there.
   */
  private boolean releaseStale(String holderConfigId, Ip ip, NicState target) {
    int at = holderConfigId.toLowerCase(java.util.Locale.ROOT).indexOf("/ipconfigurations/");
    if (at < 0 || !holderConfigId.toLowerCase(java.util.Locale.ROOT).contains("/networkinterfaces/")
        || !AzureIds.last(holderConfigId).equalsIgnoreCase(NicEdit.ownedName(ip))) {
      // only this operator's own configurations move; the old operator's are taken over where they are
      return false;
    }
    Optional<AzureIds.Id> nicId = AzureIds.parse(holderConfigId.substring(0, at));
    if (nicId.isEmpty() || AzureIds.same(nicId.get().id(), target.nic.id())) {
      return false;
    }
    try {
      synchronized (shared.nicLocks.computeIfAbsent(nicId.get().id().toLowerCase(java.util.Locale.ROOT),
          k -> new Object())) {
        NetworkInterfaceInner nic = getNic(nicId.get());
        NicEdit.Plan plan = NicEdit.plan(configs(nic), Set.of(ip), Set.of(), null, List.of(), false);
        if (plan.changed()) {
          nic.withIpConfigurations(plan.configs());
          Context ctx = PutIfMatchPolicy.context(nic.etag());
          NetworkInterfaceInner after = call("PutNetworkInterface", () -> clients.network().getNetworkInterfaces()
              .createOrUpdate(nicId.get().resourceGroup(), nicId.get().name(), nic, ctx));
          shared.nodes.values().stream().filter(n -> AzureIds.same(n.nic.id(), nicId.get().id()))
              .forEach(n -> n.body = after);
          LOG.info("{} was still on NIC {} (this operator's ipConfiguration): taken off it for {}", ip,
              nicId.get().name(), target.where());
          return true;
        }
      }
    } catch (ArmCallFailed f) {
      LOG.info("could not take {} off NIC {}: {}", ip, nicId.get().name(), f.describe());
    }
    return false;
  }

  private static AddressChangeResult failed(AddressChange c, ArmCallFailed f, NicState on) {
    return AddressChangeResult.failed(c, f.code, f.call + " on " + on.where() + ": " + f.getMessage(), f.retryable);
  }

  private static void sleep(Duration d) {
    try {
      long jitter = d.toMillis() <= 1 ? 0 : ThreadLocalRandom.current().nextLong(d.toMillis() / 2 + 1);
      Thread.sleep(d.toMillis() / 2 + jitter);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    shared.executor.shutdownNow();
  }
}
