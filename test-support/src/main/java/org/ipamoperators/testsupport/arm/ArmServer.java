package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;

/**
 * A loopback fake of Azure Resource Manager for the calls that put secondary private addresses on
 * VM NICs: compute VMs, network interfaces (full-body PUT as a long-running operation), virtual
 * networks and subnets, load balancers and their backend pools, the async-operation resource. It
 * serves TLS on 127.0.0.1 with a certificate generated at start (SAN {@code IP:127.0.0.1}), because
 * the Azure SDK's bearer-token policy refuses {@code http}. See README.md beside this class for the
 * Azure behaviours it reproduces and those it does not.
 *
 * <p>State is seeded through Java ({@link #vnet}, {@link #vm}, {@link #loadBalancer}...) and read
 * back for assertions ({@link #ipConfigurations}); every request is recorded ({@link #requests}).
 * This class is the API; the package-private classes beside it route, check and answer.
 */
public final class ArmServer implements AutoCloseable {
  public static final String NETWORK_API = "2025-03-01";
  public static final String COMPUTE_API = "2025-04-01";
  /** The SDK's api-version for the read-only NIC of a Uniform scale-set instance. */
  public static final String SCALE_SET_NIC_API = "2018-10-01";
  /** The ipConfigurations a NIC may hold unless {@link #nicLimit} says otherwise. */
  public static final int DEFAULT_NIC_LIMIT = 256;
  /** Invented: Azure's code for the 257th ipConfiguration is not documented. */
  public static final String NIC_LIMIT_CODE = "FakeArmNicIpConfigurationLimitExceeded";
  /** Invented: Azure's code for two primaries in one NIC is not documented. */
  public static final String TWO_PRIMARIES_CODE = "FakeArmMoreThanOnePrimaryIpConfiguration";
  /** Token kinds this server issues: a service principal's secret, a federated (workload) token, a managed identity. */
  public static final String CLIENT_SECRET = "client-secret";
  public static final String WORKLOAD_IDENTITY = "workload-identity";
  public static final String MANAGED_IDENTITY = "managed-identity";
  static final ObjectMapper JSON = new ObjectMapper();

  /** One recorded request: method, raw path and query, headers (lower-case names), body, answer status. */
  public record Request(String method, String pathAndQuery, Map<String, String> headers, String body, int status) {
    public String path() {
      int q = pathAndQuery.indexOf('?');
      return q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
    }

    public boolean isNicPut() {
      return "PUT".equals(method) && path().toLowerCase(Locale.ROOT).contains("/networkinterfaces/");
    }

    /** The conditional headers it carried ({@code if-match}, {@code if-none-match}), empty when none. */
    public Map<String, String> conditions() {
      Map<String, String> out = new TreeMap<>();
      for (String h : List.of("if-match", "if-none-match")) {
        if (headers.containsKey(h)) {
          out.put(h, headers.get(h));
        }
      }
      return out;
    }

    public boolean isOperationPoll() {
      return "GET".equals(method) && path().toLowerCase(Locale.ROOT).contains("/operations/");
    }
  }

  /** How a NIC PUT answers: the body's provisioningState and whether the operation URL is sent. */
  public enum PutMode { SUCCEEDED, UPDATING, UPDATING_WITHOUT_ASYNC_HEADER }

  /** An injected answer: the next {@code times} requests matching method and path get it. */
  public record Fault(String method, Pattern path, int status, String code, String message, Integer retryAfter,
      String detailCode, int[] left) {
    public static Fault of(String method, String pathRegex, int status, String code, int times) {
      return new Fault(method, Pattern.compile(pathRegex, Pattern.CASE_INSENSITIVE), status, code,
          "injected by the test", null, null, new int[] {times});
    }

    public Fault retryAfter(int seconds) {
      return new Fault(method, path, status, code, message, seconds, detailCode, left);
    }

    public Fault detail(String detail) {
      return new Fault(method, path, status, code, message, retryAfter, detail, left);
    }

    public Fault message(String m) {
      return new Fault(method, path, status, code, m, retryAfter, detailCode, left);
    }

    boolean matches(String m, String p) {
      return left[0] > 0 && (method == null || method.equalsIgnoreCase(m)) && path.matcher(p).find();
    }
  }

  private final HttpsServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "arm-server");
    t.setDaemon(true);
    return t;
  });
  private final SSLContext clientSsl;
  /** Every piece of state below is guarded by this one monitor. */
  private final ArmState state;
  private final ArmAccess access;
  private final FaultsAndThrottling limits;
  private final AsyncOperations operations;
  private final ArmSeeding seeding;
  private final ArmJson json;
  private final ArmExchange exchange;

  public ArmServer(String subscription, String location) {
    state = new ArmState(subscription, location);
    LoopbackTls tls = LoopbackTls.create();
    clientSsl = tls.client();
    try {
      server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setHttpsConfigurator(new HttpsConfigurator(tls.server()));
    server.setExecutor(executor);
    access = new ArmAccess(state);
    limits = new FaultsAndThrottling(subscription);
    operations = new AsyncOperations(state, endpoint());
    seeding = new ArmSeeding(state);
    json = new ArmJson(state);
    NicPut nicPut = new NicPut(state, operations, json);
    ResourceRoutes routes = new ResourceRoutes(state, json, operations, nicPut, endpoint());
    exchange = new ArmExchange(state, new ArmRouter(state, access, limits, routes, operations), limits);
    server.createContext("/", exchange::handle);
    server.start();
  }

  /** {@code https://127.0.0.1:PORT/}: the resource-manager endpoint to give the SDK. */
  public URI endpoint() {
    return URI.create("https://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  /** An SSL context that trusts this server's certificate (and nothing else). */
  public SSLContext clientSslContext() {
    return clientSsl;
  }

  public String subscription() {
    return state.subscription;
  }

  public String location() {
    return state.location;
  }

  // ---------------------------------------------------------------- configuration

  /** How NIC PUTs answer (default {@link PutMode#UPDATING}: the SDK polls the operation). */
  public ArmServer putMode(PutMode mode) {
    return configure(s -> s.putMode = mode);
  }

  /** Operations end after this many polls and no sooner than {@code time} after they started. */
  public ArmServer operationLength(int polls, Duration time) {
    return configure(s -> {
      s.pollsUntilDone = Math.max(1, polls);
      s.operationTime = time;
    });
  }

  /** The {@code Retry-After} sent with PUT answers and running operations (default 1). */
  public ArmServer retryAfter(int seconds) {
    return configure(s -> s.retryAfterSeconds = seconds);
  }

  public ArmServer nicLimit(int limit) {
    return configure(s -> s.nicLimit = limit);
  }

  public ArmServer pageSize(int size) {
    return configure(s -> s.pageSize = size);
  }

  /** A released address stays unusable elsewhere this long (Azure: reported ~8 min, undocumented). */
  public ArmServer quarantine(Duration time) {
    return configure(s -> s.quarantineTime = time);
  }

  /** Token buckets per subscription: capacity and refill per second for reads and writes. */
  public ArmServer throttle(int readCapacity, double readRefill, int writeCapacity, double writeRefill) {
    update(() -> {
      limits.reads.reset(readCapacity, readRefill);
      limits.writes.reset(writeCapacity, writeRefill);
    });
    return this;
  }

  /** Whether a stale {@code If-Match} on a NIC PUT gets 412 (default true; unknown on Azure). */
  public ArmServer enforceIfMatch(boolean on) {
    return configure(s -> s.enforceIfMatch = on);
  }

  /**
   * Whether GETs evaluate conditional headers as HTTP does (default true): on a NIC GET a stale
   * {@code If-Match} is 412 and a matching {@code If-None-Match} 304; the operation resource has no
   * etag, so any {@code If-Match} on a poll is 412 (and {@code If-None-Match: *} too). A client whose
   * PUT's {@code If-Match} leaks onto the polls or the final GET fails here as it risks to on Azure.
   */
  public ArmServer conditionalReads(boolean on) {
    return configure(s -> s.conditionalReads = on);
  }

  /**
   * Errors with {@code code} answer with {@code message} instead of the server's wording (which
   * names addresses, holders and pools as Azure's does): Azure's prose is not a contract, and a
   * client must get what it needs from codes and structured calls.
   */
  public ArmServer reword(String code, String message) {
    return configure(s -> s.rewordings.put(code, message));
  }

  /**
   * Requests whose bearer token was issued for one of {@code kinds} get 403 {@code AuthorizationFailed}
   * (an identity that authenticates but has no role assignment on the resources).
   */
  public ArmServer deny(String... kinds) {
    access.deny(List.of(kinds));
    return this;
  }

  /** The kind a token was issued for ({@link #CLIENT_SECRET}...), empty for a token this server did not issue. */
  public Optional<String> tokenKind(String token) {
    return access.kindOf(token);
  }

  /** The kinds of the bearer tokens the recorded ARM requests carried, in order (one per request). */
  public List<String> tokenKindsUsed() {
    return requests().stream().filter(r -> r.headers().containsKey("authorization"))
        .map(r -> tokenKind(r.headers().get("authorization").replaceFirst("^Bearer ", "")).orElse("foreign")).toList();
  }

  /** The Microsoft Entra authority host to give a credential: this server's token endpoint. */
  public String authorityHost() {
    return endpoint().toString();
  }

  public ArmServer inject(Fault fault) {
    update(() -> limits.inject(fault));
    return this;
  }

  /** The next NIC PUT's operation ends {@code Failed} with this error; the NIC is left unchanged and Failed. */
  public ArmServer failNextOperation(String code, String message) {
    update(() -> operations.failNext(code, message));
    return this;
  }

  public boolean allFaultsUsed() {
    return locked(limits::allUsed);
  }

  // ---------------------------------------------------------------- seeding

  public String vnet(String rg, String name, String... addressPrefixes) {
    return locked(() -> seeding.vnet(rg, name, addressPrefixes));
  }

  /** A subnet with one or more prefixes (IPv4 and/or IPv6); its id. */
  public String subnet(String vnetId, String name, String... prefixes) {
    return locked(() -> seeding.subnet(vnetId, name, prefixes));
  }

  /** A load balancer; pools named in {@code outboundRulePools} are referenced by an outbound rule. */
  public String loadBalancer(String rg, String name, List<String> pools, List<String> outboundRulePools) {
    return locked(() -> seeding.loadBalancer(rg, name, pools, outboundRulePools));
  }

  /** A network security group (only its existence: NIC PUTs may reference it); its id. */
  public String networkSecurityGroup(String rg, String name) {
    return locked(() -> seeding.networkSecurityGroup(rg, name));
  }

  /**
   * The NIC's own settings, as an administrator or the installer set them: its NSG (null: none),
   * DNS servers, accelerated networking, IP forwarding and tags. A later PUT replaces them with
   * what its body carries, as Azure does: a client that leaves them out removes them.
   */
  public void nicSettings(String nicId, String nsgId, List<String> dnsServers, boolean acceleratedNetworking,
      boolean ipForwarding, Map<String, String> tags) {
    update(() -> seeding.nicSettings(nicId, nsgId, dnsServers, acceleratedNetworking, ipForwarding, tags));
  }

  /** The NIC as a GET shows it (a copy), or null. */
  public ObjectNode nic(String nicId) {
    return locked(() -> {
      Nic nic = state.nic(nicId);
      return nic == null ? null : json.nic(nic);
    });
  }

  /** An LB frontend holding a private address of a subnet. */
  public void loadBalancerFrontend(String lbId, String name, String subnetId, String ip) {
    update(() -> seeding.loadBalancerFrontend(lbId, name, subnetId, ip));
  }

  /** Something else holding an address (a private endpoint, say). */
  public void holder(String id, String subnetId, String ip) {
    update(() -> seeding.holder(id, subnetId, ip));
  }

  /**
   * A VM with one NIC ({@code <name>-nic}) whose primary ipConfiguration {@code ipconfig1} gets the
   * next free address of the subnet (or {@code primaryIp}), in the given backend pools. Returns the
   * VM id.
   */
  public String vm(String rg, String name, String subnetId, String primaryIp, List<String> poolIds) {
    return locked(() -> seeding.vm(rg, name, subnetId, primaryIp, poolIds));
  }

  /**
   * A VM of a Flexible scale set: an ordinary VM resource ({@link #vm}, NIC PUT and all) whose
   * {@code virtualMachineScaleSet} names the set. Returns the VM id.
   */
  public String flexibleScaleSetVm(String rg, String scaleSet, String name, String subnetId) {
    return locked(() -> seeding.flexibleScaleSetVm(rg, scaleSet, name, subnetId));
  }

  /**
   * An instance of a Uniform scale set with its NIC ({@code <set>-nic}, ipconfig1 primary with the
   * next free address of the subnet). Its NIC is readable only under the instance
   * ({@code …/virtualMachineScaleSets/S/virtualMachines/I/networkInterfaces/N}, api-version
   * 2018-10-01) and cannot be PUT: its configurations come from the scale set's model. Returns the
   * instance id.
   */
  public String uniformScaleSetVm(String rg, String scaleSet, String instanceId, String subnetId) {
    return locked(() -> seeding.uniformScaleSetVm(rg, scaleSet, instanceId, subnetId));
  }

  /** Another NIC on a VM (not primary). */
  public String secondNic(String vmId, String subnetId) {
    return locked(() -> seeding.secondNic(vmId, subnetId));
  }

  /** The VM's NIC ids (the first created one is primary). */
  public String primaryNicId(String vmId) {
    return locked(() -> state.vms.get(vmId.toLowerCase(Locale.ROOT)).primaryNic());
  }

  /**
   * Adds a secondary ipConfiguration directly (another tool's, or the old operator's), with any
   * extra properties given. Bypasses the HTTP checks.
   */
  public void seedIpConfiguration(String nicId, String name, String ip, String subnetId, ObjectNode extraProperties) {
    update(() -> seeding.seedIpConfiguration(nicId, name, ip, subnetId, extraProperties));
  }

  /** Deletes a VM and its NICs (their addresses are released). */
  public void deleteVm(String vmId) {
    update(() -> seeding.deleteVm(vmId));
  }

  // ---------------------------------------------------------------- reading back

  /** A copy of the NIC's ipConfigurations as the server holds them (without ids, etags, types). */
  public List<ObjectNode> ipConfigurations(String nicId) {
    return locked(() -> {
      Nic nic = state.nic(nicId);
      return nic == null ? List.of() : nic.configs.stream().map(ObjectNode::deepCopy).toList();
    });
  }

  /** Secondary addresses on the NIC, by ipConfiguration name. */
  public Map<String, String> secondaryAddresses(String nicId) {
    Map<String, String> out = new TreeMap<>();
    for (ObjectNode c : ipConfigurations(nicId)) {
      if (!c.path("properties").path("primary").asBoolean(false)) {
        out.put(c.get("name").asText(), c.path("properties").path("privateIPAddress").asText());
      }
    }
    return out;
  }

  public String nicProvisioningState(String nicId) {
    return locked(() -> state.nic(nicId).state);
  }

  /** The ids of the NIC ipConfigurations in a backend pool (what the LB's GET shows). */
  public List<String> poolMembers(String lbId, String pool) {
    return locked(() -> state.backendIpConfigurations(state.lbs.get(lbId.toLowerCase(Locale.ROOT)), pool));
  }

  public List<Request> requests() {
    return exchange.requests();
  }

  public long count(Predicate<Request> p) {
    return requests().stream().filter(p).count();
  }

  /** NIC PUTs answered 200/201 since {@code from} (an index into {@link #requests}). */
  public List<Request> nicPuts(int from) {
    List<Request> all = requests();
    return all.subList(Math.min(from, all.size()), all.size()).stream().filter(Request::isNicPut).toList();
  }

  /** A change to the settings, under the state's monitor; this server, for chaining. */
  private ArmServer configure(Consumer<ArmSettings> change) {
    synchronized (state) {
      change.accept(state.settings);
    }
    return this;
  }

  private void update(Runnable change) {
    synchronized (state) {
      change.run();
    }
  }

  private <T> T locked(Supplier<T> read) {
    synchronized (state) {
      return read.get();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
