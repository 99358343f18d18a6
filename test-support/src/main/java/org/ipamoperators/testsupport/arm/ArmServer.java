package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

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
 */
public final class ArmServer implements AutoCloseable {
  public static final String NETWORK_API = "2025-03-01";
  public static final String COMPUTE_API = "2025-04-01";
  /** The SDK's api-version for the read-only NIC of a Uniform scale-set instance. */
  public static final String SCALE_SET_NIC_API = "2018-10-01";
  /** The token the server accepts when {@link #requireToken} is set; any bearer token otherwise. */
  public static final int DEFAULT_NIC_LIMIT = 256;
  /** Invented: Azure's code for the 257th ipConfiguration is not documented. */
  public static final String NIC_LIMIT_CODE = "FakeArmNicIpConfigurationLimitExceeded";
  /** Invented: Azure's code for two primaries in one NIC is not documented. */
  public static final String TWO_PRIMARIES_CODE = "FakeArmMoreThanOnePrimaryIpConfiguration";
  static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

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
      Map<String, String> out = new java.util.TreeMap<>();
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

  private final String subscription;
  private final String location;
  private final HttpsServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "arm-server");
    t.setDaemon(true);
    return t;
  });
  private final SSLContext clientSsl;
  private final Object lock = new Object();
  private final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
  private final List<Fault> faults = new ArrayList<>();
  private final Map<String, Vnet> vnets = new LinkedHashMap<>();
  private final Map<String, Nic> nics = new LinkedHashMap<>();
  private final Map<String, Vm> vms = new LinkedHashMap<>();
  private final Map<String, String[]> scaleSetVms = new LinkedHashMap<>(); // lower-case id -> {id, nic id, name}
  private final Map<String, Lb> lbs = new LinkedHashMap<>();
  private final Map<String, String> nsgs = new LinkedHashMap<>(); // lower-case id -> id
  private final Map<String, Operation> operations = new HashMap<>();
  private final List<String[]> otherHolders = new ArrayList<>(); // {id, subnetId, ip}
  private final Map<String, Instant> quarantine = new HashMap<>(); // ip -> released at
  private PutMode putMode = PutMode.UPDATING;
  private int pollsUntilDone = 1;
  private Duration operationTime = Duration.ZERO;
  private int retryAfterSeconds = 1;
  private int nicLimit = DEFAULT_NIC_LIMIT;
  private int pageSize = 50;
  private Duration quarantineTime = Duration.ZERO;
  private boolean enforceIfMatch = true;
  private boolean conditionalReads = true;
  private final Map<String, String> rewordings = new HashMap<>();
  private final Map<String, String> tokenKinds = new LinkedHashMap<>(); // token -> kind
  private final java.util.Set<String> deniedKinds = new java.util.HashSet<>();
  private final List<String[]> failOperations = new ArrayList<>(); // {code, message}
  private final TokenBucket reads = new TokenBucket(250, 25);
  private final TokenBucket writes = new TokenBucket(200, 10);

  public ArmServer(String subscription, String location) {
    this.subscription = subscription;
    this.location = location;
    try {
      char[] pass = "changeit".toCharArray();
      KeyStore store = keyStore(pass);
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, pass);
      SSLContext serverSsl = SSLContext.getInstance("TLS");
      serverSsl.init(kmf.getKeyManagers(), null, null);
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("arm", store.getCertificate("arm"));
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      clientSsl = SSLContext.getInstance("TLS");
      clientSsl.init(null, tmf.getTrustManagers(), null);
      server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.setHttpsConfigurator(new HttpsConfigurator(serverSsl));
      server.setExecutor(executor);
      server.createContext("/", this::handle);
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static KeyStore cachedStore;

  /** One key pair per JVM, made by the JDK's keytool (SAN IP:127.0.0.1); never written anywhere lasting. */
  private static synchronized KeyStore keyStore(char[] pass) throws IOException, java.security.GeneralSecurityException {
    if (cachedStore != null) {
      return cachedStore;
    }
    Path dir = Files.createTempDirectory("arm-server");
    Path ks = dir.resolve("arm.p12");
    try {
      Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
          "-genkeypair", "-alias", "arm", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
          "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
          "-keystore", ks.toString(), "-storepass", new String(pass), "-keypass", new String(pass))
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + out);
      }
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(ks)) {
        store.load(in, pass);
      }
      cachedStore = store;
      return store;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      Files.deleteIfExists(ks);
      Files.deleteIfExists(dir);
    }
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
    return subscription;
  }

  public String location() {
    return location;
  }

  // ---------------------------------------------------------------- configuration

  /** How NIC PUTs answer (default {@link PutMode#UPDATING}: the SDK polls the operation). */
  public ArmServer putMode(PutMode mode) {
    synchronized (lock) {
      putMode = mode;
    }
    return this;
  }

  /** Operations end after this many polls and no sooner than {@code time} after they started. */
  public ArmServer operationLength(int polls, Duration time) {
    synchronized (lock) {
      pollsUntilDone = Math.max(1, polls);
      operationTime = time;
    }
    return this;
  }

  /** The {@code Retry-After} sent with PUT answers and running operations (default 1). */
  public ArmServer retryAfter(int seconds) {
    synchronized (lock) {
      retryAfterSeconds = seconds;
    }
    return this;
  }

  public ArmServer nicLimit(int limit) {
    synchronized (lock) {
      nicLimit = limit;
    }
    return this;
  }

  public ArmServer pageSize(int size) {
    synchronized (lock) {
      pageSize = size;
    }
    return this;
  }

  /** A released address stays unusable elsewhere this long (Azure: reported ~8 min, undocumented). */
  public ArmServer quarantine(Duration time) {
    synchronized (lock) {
      quarantineTime = time;
    }
    return this;
  }

  /** Token buckets per subscription: capacity and refill per second for reads and writes. */
  public ArmServer throttle(int readCapacity, double readRefill, int writeCapacity, double writeRefill) {
    synchronized (lock) {
      reads.reset(readCapacity, readRefill);
      writes.reset(writeCapacity, writeRefill);
    }
    return this;
  }

  /** Whether a stale {@code If-Match} on a NIC PUT gets 412 (default true; unknown on Azure). */
  public ArmServer enforceIfMatch(boolean on) {
    synchronized (lock) {
      enforceIfMatch = on;
    }
    return this;
  }

  /**
   * Whether GETs evaluate conditional headers as HTTP does (default true): on a NIC GET a stale
   * {@code If-Match} is 412 and a matching {@code If-None-Match} 304; the operation resource has no
   * etag, so any {@code If-Match} on a poll is 412 (and {@code If-None-Match: *} too). A client whose
   * PUT's {@code If-Match} leaks onto the polls or the final GET fails here as it risks to on Azure.
   */
  public ArmServer conditionalReads(boolean on) {
    synchronized (lock) {
      conditionalReads = on;
    }
    return this;
  }

  /**
   * Errors with {@code code} answer with {@code message} instead of the server's wording (which
   * names addresses, holders and pools as Azure's does): Azure's prose is not a contract, and a
   * client must get what it needs from codes and structured calls.
   */
  public ArmServer reword(String code, String message) {
    synchronized (lock) {
      rewordings.put(code, message);
    }
    return this;
  }

  /** Token kinds this server issues: a service principal's secret, a federated (workload) token, a managed identity. */
  public static final String CLIENT_SECRET = "client-secret";
  public static final String WORKLOAD_IDENTITY = "workload-identity";
  public static final String MANAGED_IDENTITY = "managed-identity";

  /**
   * Requests whose bearer token was issued for one of {@code kinds} get 403 {@code AuthorizationFailed}
   * (an identity that authenticates but has no role assignment on the resources).
   */
  public ArmServer deny(String... kinds) {
    synchronized (lock) {
      deniedKinds.clear();
      deniedKinds.addAll(List.of(kinds));
    }
    return this;
  }

  /** The kind a token was issued for ({@link #CLIENT_SECRET}...), empty for a token this server did not issue. */
  public Optional<String> tokenKind(String token) {
    synchronized (lock) {
      return Optional.ofNullable(tokenKinds.get(token));
    }
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
    synchronized (lock) {
      faults.add(fault);
    }
    return this;
  }

  /** The next NIC PUT's operation ends {@code Failed} with this error; the NIC is left unchanged and Failed. */
  public ArmServer failNextOperation(String code, String message) {
    synchronized (lock) {
      failOperations.add(new String[] {code, message});
    }
    return this;
  }

  public boolean allFaultsUsed() {
    synchronized (lock) {
      return faults.stream().allMatch(f -> f.left()[0] <= 0);
    }
  }

  // ---------------------------------------------------------------- seeding

  public String vnet(String rg, String name, String... addressPrefixes) {
    synchronized (lock) {
      Vnet v = new Vnet(rg, name, List.of(addressPrefixes));
      vnets.put(v.id().toLowerCase(Locale.ROOT), v);
      return v.id();
    }
  }

  /** A subnet with one or more prefixes (IPv4 and/or IPv6); its id. */
  public String subnet(String vnetId, String name, String... prefixes) {
    synchronized (lock) {
      Vnet v = vnets.get(vnetId.toLowerCase(Locale.ROOT));
      Subnet s = new Subnet(v, name, java.util.Arrays.stream(prefixes).map(Cidr::parse).toList());
      v.subnets.put(name.toLowerCase(Locale.ROOT), s);
      return s.id();
    }
  }

  /** A load balancer; pools named in {@code outboundRulePools} are referenced by an outbound rule. */
  public String loadBalancer(String rg, String name, List<String> pools, List<String> outboundRulePools) {
    synchronized (lock) {
      Lb lb = new Lb(rg, name);
      pools.forEach(p -> lb.pools.put(p.toLowerCase(Locale.ROOT), p));
      outboundRulePools.forEach(p -> lb.outbound.add(p.toLowerCase(Locale.ROOT)));
      lbs.put(lb.id().toLowerCase(Locale.ROOT), lb);
      return lb.id();
    }
  }

  /** A network security group (only its existence: NIC PUTs may reference it); its id. */
  public String networkSecurityGroup(String rg, String name) {
    synchronized (lock) {
      String id = "/subscriptions/" + subscription + "/resourceGroups/" + rg
          + "/providers/Microsoft.Network/networkSecurityGroups/" + name;
      nsgs.put(id.toLowerCase(Locale.ROOT), id);
      return id;
    }
  }

  /**
   * The NIC's own settings, as an administrator or the installer set them: its NSG (null: none),
   * DNS servers, accelerated networking, IP forwarding and tags. A later PUT replaces them with
   * what its body carries, as Azure does: a client that leaves them out removes them.
   */
  public void nicSettings(String nicId, String nsgId, List<String> dnsServers, boolean acceleratedNetworking,
      boolean ipForwarding, Map<String, String> tags) {
    synchronized (lock) {
      Nic nic = nics.get(nicId.toLowerCase(Locale.ROOT));
      nic.nsgId = nsgId;
      nic.dnsServers = List.copyOf(dnsServers);
      nic.acceleratedNetworking = acceleratedNetworking;
      nic.ipForwarding = ipForwarding;
      nic.tags = F.objectNode();
      tags.forEach(nic.tags::put);
      nic.etag = newEtag();
    }
  }

  /** The NIC as a GET shows it (a copy), or null. */
  public ObjectNode nic(String nicId) {
    synchronized (lock) {
      Nic nic = nics.get(nicId.toLowerCase(Locale.ROOT));
      return nic == null ? null : nicJson(nic);
    }
  }

  /** An LB frontend holding a private address of a subnet. */
  public void loadBalancerFrontend(String lbId, String name, String subnetId, String ip) {
    synchronized (lock) {
      Lb lb = lbs.get(lbId.toLowerCase(Locale.ROOT));
      lb.frontends.add(new String[] {name, subnetId, ip});
    }
  }

  /** Something else holding an address (a private endpoint, say). */
  public void holder(String id, String subnetId, String ip) {
    synchronized (lock) {
      otherHolders.add(new String[] {id, subnetId, ip});
    }
  }

  /**
   * A VM with one NIC ({@code <name>-nic}) whose primary ipConfiguration {@code ipconfig1} gets the
   * next free address of the subnet (or {@code primaryIp}), in the given backend pools. Returns the
   * VM id.
   */
  public String vm(String rg, String name, String subnetId, String primaryIp, List<String> poolIds) {
    synchronized (lock) {
      Subnet s = subnet(subnetId).orElseThrow(() -> new IllegalArgumentException("no subnet " + subnetId));
      Nic nic = new Nic(rg, name + "-nic");
      Vm vm = new Vm(rg, name);
      nic.vmId = vm.id();
      String ip = primaryIp != null ? primaryIp : nextFree(s, s.prefixes.get(0).v4(), nic, List.of())
          .orElseThrow();
      ObjectNode cfg = F.objectNode().put("name", "ipconfig1");
      ObjectNode props = cfg.putObject("properties");
      props.put("primary", true).put("privateIPAddress", ip).put("privateIPAllocationMethod", "Dynamic")
          .put("privateIPAddressVersion", "IPv4");
      props.putObject("subnet").put("id", s.id());
      ArrayNode pools = props.putArray("loadBalancerBackendAddressPools");
      poolIds.forEach(p -> pools.addObject().put("id", p));
      nic.configs.add(cfg);
      nic.etag = newEtag();
      nics.put(nic.id().toLowerCase(Locale.ROOT), nic);
      vm.nics.add(nic.id());
      vms.put(vm.id().toLowerCase(Locale.ROOT), vm);
      return vm.id();
    }
  }

  /**
   * A VM of a Flexible scale set: an ordinary VM resource ({@link #vm}, NIC PUT and all) whose
   * {@code virtualMachineScaleSet} names the set. Returns the VM id.
   */
  public String flexibleScaleSetVm(String rg, String scaleSet, String name, String subnetId) {
    String id = vm(rg, name, subnetId, null, List.of());
    synchronized (lock) {
      vms.get(id.toLowerCase(Locale.ROOT)).scaleSet = "/subscriptions/" + subscription + "/resourceGroups/" + rg
          + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + scaleSet;
    }
    return id;
  }

  /**
   * An instance of a Uniform scale set with its NIC ({@code <set>-nic}, ipconfig1 primary with the
   * next free address of the subnet). Its NIC is readable only under the instance
   * ({@code …/virtualMachineScaleSets/S/virtualMachines/I/networkInterfaces/N}, api-version
   * 2018-10-01) and cannot be PUT: its configurations come from the scale set's model. Returns the
   * instance id.
   */
  public String uniformScaleSetVm(String rg, String scaleSet, String instanceId, String subnetId) {
    synchronized (lock) {
      Subnet s = subnet(subnetId).orElseThrow(() -> new IllegalArgumentException("no subnet " + subnetId));
      String vmId = "/subscriptions/" + subscription + "/resourceGroups/" + rg
          + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + scaleSet + "/virtualMachines/" + instanceId;
      Nic nic = new Nic(rg, scaleSet + "-nic");
      nic.scaleSetVmId = vmId;
      nic.vmId = vmId;
      ObjectNode cfg = F.objectNode().put("name", "ipconfig1");
      ObjectNode props = cfg.putObject("properties");
      props.put("primary", true).put("privateIPAddress", nextFree(s, true, nic, List.of()).orElseThrow())
          .put("privateIPAllocationMethod", "Dynamic").put("privateIPAddressVersion", "IPv4");
      props.putObject("subnet").put("id", s.id());
      nic.configs.add(cfg);
      nic.etag = newEtag();
      nics.put(nic.id().toLowerCase(Locale.ROOT), nic);
      scaleSetVms.put(vmId.toLowerCase(Locale.ROOT), new String[] {vmId, nic.id(), scaleSet + "_" + instanceId});
      return vmId;
    }
  }

  /** Another NIC on a VM (not primary). */
  public String secondNic(String vmId, String subnetId) {
    synchronized (lock) {
      Vm vm = vms.get(vmId.toLowerCase(Locale.ROOT));
      Subnet s = subnet(subnetId).orElseThrow();
      Nic nic = new Nic(vm.rg, vm.name + "-nic" + (vm.nics.size() + 1));
      nic.vmId = vm.id();
      ObjectNode cfg = F.objectNode().put("name", "ipconfig1");
      ObjectNode props = cfg.putObject("properties");
      props.put("primary", true).put("privateIPAddress", nextFree(s, true, nic, List.of()).orElseThrow())
          .put("privateIPAllocationMethod", "Dynamic").put("privateIPAddressVersion", "IPv4");
      props.putObject("subnet").put("id", s.id());
      nic.configs.add(cfg);
      nic.etag = newEtag();
      nics.put(nic.id().toLowerCase(Locale.ROOT), nic);
      vm.nics.add(0, nic.id()); // listed first, but not primary
      vm.primaryFlagged = true;
      return nic.id();
    }
  }

  /** The VM's NIC ids (the first created one is primary). */
  public String primaryNicId(String vmId) {
    synchronized (lock) {
      Vm vm = vms.get(vmId.toLowerCase(Locale.ROOT));
      return vm.nics.get(vm.nics.size() - 1);
    }
  }

  /**
   * Adds a secondary ipConfiguration directly (another tool's, or the old operator's), with any
   * extra properties given. Bypasses the HTTP checks.
   */
  public void seedIpConfiguration(String nicId, String name, String ip, String subnetId, ObjectNode extraProperties) {
    synchronized (lock) {
      Nic nic = nics.get(nicId.toLowerCase(Locale.ROOT));
      ObjectNode cfg = F.objectNode().put("name", name);
      ObjectNode props = cfg.putObject("properties");
      if (extraProperties != null) {
        props.setAll(extraProperties);
      }
      props.put("primary", false).put("privateIPAddress", ip).put("privateIPAllocationMethod", "Static")
          .put("privateIPAddressVersion", ip.contains(":") ? "IPv6" : "IPv4");
      props.putObject("subnet").put("id", subnetId);
      nic.configs.add(cfg);
      nic.etag = newEtag();
    }
  }

  /** Deletes a VM and its NICs (their addresses are released). */
  public void deleteVm(String vmId) {
    synchronized (lock) {
      Vm vm = vms.remove(vmId.toLowerCase(Locale.ROOT));
      if (vm != null) {
        vm.nics.forEach(n -> nics.remove(n.toLowerCase(Locale.ROOT)));
      }
    }
  }

  /** A copy of the NIC's ipConfigurations as the server holds them (without ids, etags, types). */
  public List<ObjectNode> ipConfigurations(String nicId) {
    synchronized (lock) {
      Nic nic = nics.get(nicId.toLowerCase(Locale.ROOT));
      return nic == null ? List.of() : nic.configs.stream().map(ObjectNode::deepCopy).toList();
    }
  }

  /** Secondary addresses on the NIC, by ipConfiguration name. */
  public Map<String, String> secondaryAddresses(String nicId) {
    Map<String, String> out = new java.util.TreeMap<>();
    for (ObjectNode c : ipConfigurations(nicId)) {
      if (!c.path("properties").path("primary").asBoolean(false)) {
        out.put(c.get("name").asText(), c.path("properties").path("privateIPAddress").asText());
      }
    }
    return out;
  }

  public String nicProvisioningState(String nicId) {
    synchronized (lock) {
      return nics.get(nicId.toLowerCase(Locale.ROOT)).state;
    }
  }

  /** The ids of the NIC ipConfigurations in a backend pool (what the LB's GET shows). */
  public List<String> poolMembers(String lbId, String pool) {
    synchronized (lock) {
      return backendIpConfigurations(lbs.get(lbId.toLowerCase(Locale.ROOT)), pool);
    }
  }

  public List<Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  public long count(Predicate<Request> p) {
    return requests().stream().filter(p).count();
  }

  /** NIC PUTs answered 200/201 since {@code from} (an index into {@link #requests}). */
  public List<Request> nicPuts(int from) {
    List<Request> all = requests();
    return all.subList(Math.min(from, all.size()), all.size()).stream().filter(Request::isNicPut).toList();
  }

  // ---------------------------------------------------------------- model

  private final class Vnet {
    final String rg;
    final String name;
    final List<String> prefixes;
    final Map<String, Subnet> subnets = new LinkedHashMap<>();

    Vnet(String rg, String name, List<String> prefixes) {
      this.rg = rg;
      this.name = name;
      this.prefixes = prefixes;
    }

    String id() {
      return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Network/virtualNetworks/"
          + name;
    }
  }

  private static final class Subnet {
    final Vnet vnet;
    final String name;
    final List<Cidr> prefixes;

    Subnet(Vnet vnet, String name, List<Cidr> prefixes) {
      this.vnet = vnet;
      this.name = name;
      this.prefixes = prefixes;
    }

    String id() {
      return vnet.id() + "/subnets/" + name;
    }

    Optional<Cidr> prefixFor(String ip) {
      return prefixes.stream().filter(c -> c.contains(ip)).findFirst();
    }
  }

  private final class Nic {
    final String rg;
    final String name;
    String vmId;
    List<ObjectNode> configs = new ArrayList<>();
    ObjectNode tags = F.objectNode();
    String nsgId;
    List<String> dnsServers = List.of();
    boolean acceleratedNetworking;
    boolean ipForwarding;
    String etag;
    String state = "Succeeded";
    String runningOperation;
    final String guid = UUID.randomUUID().toString();

    Nic(String rg, String name) {
      this.rg = rg;
      this.name = name;
    }

    String scaleSetVmId; // a Uniform scale-set instance's NIC: its id lives under the instance

    String id() {
      return scaleSetVmId != null ? scaleSetVmId + "/networkInterfaces/" + name : "/subscriptions/" + subscription
          + "/resourceGroups/" + rg + "/providers/Microsoft.Network/networkInterfaces/" + name;
    }
  }

  private final class Vm {
    final String rg;
    final String name;
    final List<String> nics = new ArrayList<>();
    boolean primaryFlagged;
    String scaleSet; // a Flexible scale set's VM

    Vm(String rg, String name) {
      this.rg = rg;
      this.name = name;
    }

    String id() {
      return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Compute/virtualMachines/"
          + name;
    }
  }

  private final class Lb {
    final String rg;
    final String name;
    final Map<String, String> pools = new LinkedHashMap<>();
    final java.util.Set<String> outbound = new java.util.HashSet<>();
    final List<String[]> frontends = new ArrayList<>();

    Lb(String rg, String name) {
      this.rg = rg;
      this.name = name;
    }

    String id() {
      return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Network/loadBalancers/"
          + name;
    }
  }

  private static final class Operation {
    final String id;
    final String nicKey;
    final Instant started = Instant.now();
    int polls;
    String status = "InProgress";
    String[] failure;
    List<ObjectNode> rollback;

    Operation(String id, String nicKey) {
      this.id = id;
      this.nicKey = nicKey;
    }
  }

  private static final class TokenBucket {
    double capacity;
    double refill;
    double tokens;
    long last = System.nanoTime();

    TokenBucket(double capacity, double refill) {
      reset(capacity, refill);
    }

    void reset(double c, double r) {
      capacity = c;
      refill = r;
      tokens = c;
      last = System.nanoTime();
    }

    boolean take() {
      long now = System.nanoTime();
      tokens = Math.min(capacity, tokens + (now - last) / 1e9 * refill);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return true;
      }
      return false;
    }

    int retryAfter() {
      return (int) Math.max(1, Math.ceil((1 - tokens) / Math.max(refill, 0.001)));
    }
  }

  /** An answer: status, body, extra headers. */
  private record Answer(int status, JsonNode body, Map<String, String> headers) {
    static Answer ok(JsonNode body) {
      return new Answer(200, body, Map.of());
    }
  }

  private static final class ArmError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String code;
    final String detailCode;
    final Integer retryAfter;

    ArmError(int status, String code, String message) {
      this(status, code, message, null, null);
    }

    ArmError(int status, String code, String message, String detailCode, Integer retryAfter) {
      super(message, null, false, false);
      this.status = status;
      this.code = code;
      this.detailCode = detailCode;
      this.retryAfter = retryAfter;
    }

    Answer answer() {
      ObjectNode body = F.objectNode();
      ObjectNode err = body.putObject("error").put("code", code).put("message", getMessage());
      ArrayNode details = err.putArray("details");
      if (detailCode != null) {
        details.addObject().put("code", detailCode).put("message", getMessage());
      }
      Map<String, String> h = retryAfter == null ? Map.of() : Map.of("Retry-After", String.valueOf(retryAfter));
      return new Answer(status, body, h);
    }
  }

  // ---------------------------------------------------------------- HTTP

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String method = ex.getRequestMethod();
      String raw = ex.getRequestURI().getRawPath();
      String rawQuery = ex.getRequestURI().getRawQuery();
      String pathAndQuery = raw + (rawQuery == null ? "" : "?" + rawQuery);
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, String> headers = new java.util.TreeMap<>();
      ex.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
      Answer a;
      try {
        a = dispatch(method, raw, query(rawQuery), headers, body);
      } catch (ArmError e) {
        String other;
        synchronized (lock) {
          other = rewordings.get(e.code);
        }
        a = (other == null ? e : new ArmError(e.status, e.code, other, e.detailCode, e.retryAfter)).answer();
      } catch (RuntimeException e) {
        a = new ArmError(500, "InternalServerError", "fake ARM server: " + e).answer();
      }
      requests.add(new Request(method, pathAndQuery, headers, body, a.status()));
      ex.getResponseHeaders().add("x-ms-request-id", UUID.randomUUID().toString());
      ex.getResponseHeaders().add("x-ms-correlation-request-id", UUID.randomUUID().toString());
      ex.getResponseHeaders().add("x-ms-routing-request-id", "EASTUS:FAKE");
      if (headers.containsKey("x-ms-client-request-id")) {
        ex.getResponseHeaders().add("x-ms-client-request-id", headers.get("x-ms-client-request-id"));
      }
      synchronized (lock) {
        ex.getResponseHeaders().add("x-ms-ratelimit-remaining-subscription-reads", String.valueOf((int) reads.tokens));
        ex.getResponseHeaders().add("x-ms-ratelimit-remaining-subscription-writes", String.valueOf((int) writes.tokens));
      }
      a.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
      byte[] bytes = a.body() == null ? new byte[0] : JSON.writeValueAsBytes(a.body());
      if (a.body() != null) {
        ex.getResponseHeaders().add("Content-Type", "application/json; charset=utf-8");
      }
      ex.sendResponseHeaders(a.status(), bytes.length == 0 ? -1 : bytes.length);
      if (bytes.length > 0) {
        ex.getResponseBody().write(bytes);
      }
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new LinkedHashMap<>();
    if (raw == null) {
      return out;
    }
    for (String part : raw.split("&")) {
      int eq = part.indexOf('=');
      String k = eq < 0 ? part : part.substring(0, eq);
      String v = eq < 0 ? "" : part.substring(eq + 1);
      out.put(URLDecoder.decode(k, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT),
          URLDecoder.decode(v, StandardCharsets.UTF_8));
    }
    return out;
  }

  private Answer dispatch(String method, String rawPath, Map<String, String> q, Map<String, String> headers,
      String body) {
    Optional<Answer> token = tokenEndpoint(method, rawPath, headers, body);
    if (token.isPresent()) {
      return token.get();
    }
    authenticate(method, rawPath, headers);
    String path = URLDecoder.decode(rawPath, StandardCharsets.UTF_8);
    List<String> seg = new ArrayList<>(List.of(path.replaceAll("^/+|/+$", "").split("/")));
    List<String> low = seg.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    synchronized (lock) {
      faultOrThrottle(method, rawPath);
      checkSubscriptionAndApi(seg, low, q);
      // /subscriptions/S/providers/Microsoft.Network/locations/L/operations/ID
      if (low.size() == 8 && "locations".equals(low.get(4)) && "operations".equals(low.get(6)) && "GET".equals(method)) {
        checkRead(headers, null, "operation " + seg.get(7));
        return operation(seg.get(7));
      }
      boolean inRg = low.size() > 3 && "resourcegroups".equals(low.get(2));
      int p = inRg ? 4 : 2; // index of "providers"
      if (low.size() <= p + 2 || !"providers".equals(low.get(p))) {
        throw new ArmError(404, "InvalidResourceType", "unsupported path " + path);
      }
      String type = low.get(p + 2);
      Call r = new Call(method, rawPath, q, headers, body, inRg ? seg.get(3) : null, seg.subList(p + 3,
          seg.size()), low.subList(p + 3, low.size()));
      if (!"GET".equals(method) && !("PUT".equals(method) && "networkinterfaces".equals(type) && r.rest().size() == 1)) {
        throw new ArmError(405, "MethodNotAllowed", method + " is not served by the fake for " + path);
      }
      Answer answer = switch (type) {
        case "virtualmachines" -> virtualMachines(r);
        case "networkinterfaces" -> networkInterfaces(r);
        case "virtualnetworks" -> virtualNetworks(r);
        case "virtualmachinescalesets" -> scaleSetVm(r.rg(), r.rest(), r.restLow());
        case "loadbalancers" -> loadBalancers(r);
        default -> null;
      };
      if (answer == null) {
        throw new ArmError(404, "InvalidResourceType", "The fake ARM server does not serve " + method + " " + path);
      }
      return answer;
    }
  }

  /** A request under {@code providers/<namespace>/<type>/}: {@code rest} is what follows the type (as sent, and lower case). */
  private record Call(String method, String rawPath, Map<String, String> q, Map<String, String> headers,
      String body, String rg, List<String> rest, List<String> restLow) {}

  /** A bearer token is required; one of a denied kind gets 403. */
  private void authenticate(String method, String rawPath, Map<String, String> headers) {
    String auth = headers.get("authorization");
    if (auth == null || !auth.startsWith("Bearer ") || auth.length() <= 7) {
      throw new ArmError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.");
    }
    synchronized (lock) {
      String kind = tokenKinds.get(auth.substring(7));
      if (kind != null && deniedKinds.contains(kind)) {
        throw new ArmError(403, "AuthorizationFailed", "The client with a " + kind + " token does not have "
            + "authorization to perform action '" + method + "' over scope '" + rawPath + "' or the scope is invalid.");
      }
    }
  }

  /** An injected fault that matches, or 429 when the subscription's read or write bucket is empty. */
  private void faultOrThrottle(String method, String rawPath) {
    for (Fault f : faults) {
      if (f.matches(method, rawPath)) {
        f.left()[0]--;
        throw new ArmError(f.status(), f.code(), f.message(), f.detailCode(), f.retryAfter());
      }
    }
    boolean write = !"GET".equals(method);
    TokenBucket bucket = write ? writes : reads;
    if (!bucket.take()) {
      throw new ArmError(429, "SubscriptionRequestsThrottled", "Number of " + (write ? "write" : "read")
          + " requests for subscription '" + subscription + "' exceeded the limit. Please try again after '"
          + bucket.retryAfter() + "' seconds.", null, bucket.retryAfter());
    }
  }

  /** This server's subscription, and the api-version of the provider the path names. */
  private void checkSubscriptionAndApi(List<String> seg, List<String> low, Map<String, String> q) {
    if (low.size() < 2 || !"subscriptions".equals(low.get(0)) || !low.get(1).equalsIgnoreCase(subscription)) {
      throw new ArmError(404, "SubscriptionNotFound", "The subscription '" + (low.size() > 1 ? seg.get(1) : "")
          + "' could not be found.");
    }
    String provider = low.contains("microsoft.compute") ? "compute" : "network";
    String wanted = "compute".equals(provider) ? COMPUTE_API : NETWORK_API;
    if (low.contains("virtualmachinescalesets") && low.contains("networkinterfaces")) {
      provider = "network (scale-set NIC)";
      wanted = SCALE_SET_NIC_API;
    }
    String api = q.get("api-version");
    if (api == null) {
      throw new ArmError(400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required.");
    }
    if (!api.equals(wanted)) {
      throw new ArmError(400, "InvalidApiVersionParameter", "fake ARM server serves " + provider + " at api-version "
          + wanted + " only, got " + api);
    }
  }

  private String resourceKey(String rg, String type, String name) {
    return ("/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/" + type + "/" + name)
        .toLowerCase(Locale.ROOT);
  }

  private Answer virtualMachines(Call r) {
    if (r.rest().isEmpty()) {
      return page(vms.values().stream().filter(v -> r.rg() == null || v.rg.equalsIgnoreCase(r.rg()))
          .map(this::vmJson).toList(), r.rawPath(), r.q());
    }
    if (r.rest().size() == 1) {
      Vm vm = vms.get(r.rg() != null ? resourceKey(r.rg(), "Microsoft.Compute/virtualMachines", r.rest().get(0))
          : r.rest().get(0).toLowerCase(Locale.ROOT));
      if (vm == null) {
        throw notFound("Microsoft.Compute/virtualMachines", r.rest().get(0), r.rg());
      }
      return Answer.ok(vmJson(vm));
    }
    return null;
  }

  private Answer networkInterfaces(Call r) {
    if (r.rg() == null || r.rest().isEmpty()) {
      return null;
    }
    List<String> rest = r.rest();
    String key = resourceKey(r.rg(), "Microsoft.Network/networkInterfaces", rest.get(0));
    if ("PUT".equals(r.method())) {
      return putNic(key, r.rg(), rest.get(0), r.headers(), r.body());
    }
    Nic nic = nics.get(key);
    if (nic == null) {
      throw notFound("Microsoft.Network/networkInterfaces", rest.get(0), r.rg());
    }
    if (rest.size() == 1) {
      if (!checkRead(r.headers(), nic.etag, "network interface " + nic.name)) {
        return new Answer(304, null, Map.of("ETag", nic.etag));
      }
      advanceByResourcePoll(nic);
      return new Answer(200, nicJson(nic), Map.of("ETag", nic.etag));
    }
    if ("ipconfigurations".equals(r.restLow().get(1))) {
      List<JsonNode> cfgs = nic.configs.stream().map(c -> (JsonNode) configJson(nic, c)).toList();
      if (rest.size() == 2) {
        ObjectNode out = F.objectNode();
        out.putArray("value").addAll(cfgs);
        return Answer.ok(out);
      }
      return Answer.ok(cfgs.stream().filter(c -> c.get("name").asText().equalsIgnoreCase(rest.get(2)))
          .findFirst().orElseThrow(() -> notFound("ipConfigurations", rest.get(2), r.rg())));
    }
    return null;
  }

  private Answer virtualNetworks(Call r) {
    if (r.rest().isEmpty()) {
      return page(vnets.values().stream().filter(v -> r.rg() == null || v.rg.equalsIgnoreCase(r.rg()))
          .map(v -> vnetJson(v, false)).toList(), r.rawPath(), r.q());
    }
    if (r.rg() == null) {
      return null;
    }
    Vnet v = vnets.get(resourceKey(r.rg(), "Microsoft.Network/virtualNetworks", r.rest().get(0)));
    if (v == null) {
      throw notFound("Microsoft.Network/virtualNetworks", r.rest().get(0), r.rg());
    }
    String expand = r.q().getOrDefault("$expand", "");
    if (r.rest().size() == 1) {
      return Answer.ok(vnetJson(v, expand.equalsIgnoreCase("subnets/ipConfigurations")));
    }
    switch (r.restLow().get(1)) {
      case "subnets":
        if (r.rest().size() == 2) {
          ObjectNode out = F.objectNode();
          v.subnets.values().forEach(s -> out.withArray("value").add(subnetJson(s, false)));
          out.withArray("value");
          return Answer.ok(out);
        }
        Subnet s = v.subnets.get(r.restLow().get(2));
        if (s == null) {
          throw notFound("subnets", r.rest().get(2), r.rg());
        }
        return Answer.ok(subnetJson(s, expand.equalsIgnoreCase("ipConfigurations")));
      case "checkipaddressavailability":
        return checkIp(v, r.q().get("ipaddress"));
      case "usages":
        return usages(v);
      default:
        return null;
    }
  }

  private Answer loadBalancers(Call r) {
    if (r.rg() == null || r.rest().isEmpty()) {
      return null;
    }
    Lb lb = lbs.get(resourceKey(r.rg(), "Microsoft.Network/loadBalancers", r.rest().get(0)));
    if (lb == null) {
      throw notFound("Microsoft.Network/loadBalancers", r.rest().get(0), r.rg());
    }
    if (r.rest().size() == 1) {
      return Answer.ok(lbJson(lb));
    }
    if (r.rest().size() == 3 && "backendaddresspools".equals(r.restLow().get(1))) {
      String pool = lb.pools.get(r.restLow().get(2));
      if (pool == null) {
        throw notFound("backendAddressPools", r.rest().get(2), r.rg());
      }
      return Answer.ok(poolJson(lb, pool));
    }
    return null;
  }

  /**
   * Microsoft Entra's token endpoint ({@code POST /{tenant}/oauth2/v2.0/token}: a client secret or a
   * federated client assertion) and the instance metadata service's managed-identity token
   * ({@code GET /metadata/identity/oauth2/token} with {@code Metadata: true}), each issuing tokens of
   * its own kind.
   */
  private Optional<Answer> tokenEndpoint(String method, String rawPath, Map<String, String> headers, String body) {
    String low = rawPath.toLowerCase(Locale.ROOT);
    String kind;
    if ("POST".equals(method) && low.matches("^/[^/]+/oauth2/v2\\.0/token$")) {
      Map<String, String> form = query(body);
      kind = form.containsKey("client_secret") ? CLIENT_SECRET
          : form.containsKey("client_assertion") ? WORKLOAD_IDENTITY : null;
      if (kind == null || form.getOrDefault("client_id", "").isBlank()) {
        return Optional.of(new Answer(400, F.objectNode().put("error", "invalid_request")
            .put("error_description", "no client credential"), Map.of()));
      }
    } else if ("GET".equals(method) && low.equals("/metadata/identity/oauth2/token")) {
      if (!"true".equalsIgnoreCase(headers.get("metadata"))) {
        return Optional.of(new Answer(400, F.objectNode().put("error", "invalid_request"), Map.of()));
      }
      kind = MANAGED_IDENTITY;
    } else {
      return Optional.empty();
    }
    String token;
    synchronized (lock) {
      token = kind + "-" + (tokenKinds.size() + 1) + "-" + UUID.randomUUID();
      tokenKinds.put(token, kind);
    }
    ObjectNode out = F.objectNode().put("token_type", "Bearer").put("access_token", token);
    if (MANAGED_IDENTITY.equals(kind)) {
      out.put("expires_in", "3599").put("expires_on", String.valueOf(Instant.now().getEpochSecond() + 3599))
          .put("resource", "https://management.core.windows.net/");
    } else {
      out.put("expires_in", 3599).put("ext_expires_in", 3599);
    }
    return Optional.of(Answer.ok(out));
  }

  /**
   * HTTP's conditional GET against a resource whose current etag is {@code etag} (null: it has
   * none): false for 304, an {@link ArmError} 412 when {@code If-Match} fails.
   */
  private boolean checkRead(Map<String, String> headers, String etag, String what) {
    if (!conditionalReads) {
      return true;
    }
    String ifMatch = headers.get("if-match");
    String ifNoneMatch = headers.get("if-none-match");
    if (ifMatch != null && !("*".equals(ifMatch.trim()) || etag != null && etagListed(ifMatch, etag))) {
      throw new ArmError(412, "PreconditionFailed", "The condition If-Match: " + ifMatch + " on a GET of " + what
          + " does not hold: its etag is " + (etag == null ? "none" : etag) + ".");
    }
    if (ifNoneMatch != null && ("*".equals(ifNoneMatch.trim()) || etag != null && etagListed(ifNoneMatch, etag))) {
      if (etag == null) {
        throw new ArmError(412, "PreconditionFailed", "The condition If-None-Match: " + ifNoneMatch + " on a GET of "
            + what + " does not hold: it exists.");
      }
      return false;
    }
    return true;
  }

  private static boolean etagListed(String header, String etag) {
    return java.util.Arrays.stream(header.split(",")).map(String::trim).anyMatch(etag::equals);
  }

  /** {@code …/virtualMachineScaleSets/S/virtualMachines/I} and its {@code networkInterfaces/N}. */
  private Answer scaleSetVm(String rg, List<String> rest, List<String> restLow) {
    if (rg == null || rest.size() < 3 || !"virtualmachines".equals(restLow.get(1))) {
      throw new ArmError(404, "InvalidResourceType", "The fake ARM server serves scale-set instances only");
    }
    String vmId = "/subscriptions/" + subscription + "/resourceGroups/" + rg
        + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + rest.get(0) + "/virtualMachines/" + rest.get(2);
    String[] vm = scaleSetVms.get(vmId.toLowerCase(Locale.ROOT));
    if (vm == null) {
      throw notFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", rest.get(0) + "/" + rest.get(2), rg);
    }
    if (rest.size() == 3) {
      ObjectNode o = F.objectNode().put("name", vm[2]).put("id", vm[0]).put("instanceId", rest.get(2))
          .put("type", "Microsoft.Compute/virtualMachineScaleSets/virtualMachines").put("location", location);
      ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded")
          .put("latestModelApplied", true);
      props.putObject("osProfile").put("computerName", vm[2]);
      props.putObject("networkProfile").putArray("networkInterfaces").addObject().put("id", vm[1])
          .putObject("properties").put("primary", true);
      return Answer.ok(o);
    }
    if (rest.size() == 5 && "networkinterfaces".equals(restLow.get(3))) {
      Nic nic = nics.get((vm[0] + "/networkInterfaces/" + rest.get(4)).toLowerCase(Locale.ROOT));
      if (nic == null) {
        throw notFound("networkInterfaces", rest.get(4), rg);
      }
      return new Answer(200, nicJson(nic), Map.of("ETag", nic.etag));
    }
    throw new ArmError(404, "InvalidResourceType", "The fake ARM server does not serve " + String.join("/", rest));
  }

  private ArmError notFound(String type, String name, String rg) {
    return new ArmError(404, "ResourceNotFound", "The Resource '" + type + "/" + name + "' under resource group '"
        + rg + "' was not found.");
  }

  private Answer page(List<ObjectNode> all, String rawPath, Map<String, String> q) {
    int skip = Integer.parseInt(q.getOrDefault("$skiptoken", "0"));
    ObjectNode out = F.objectNode();
    ArrayNode value = out.putArray("value");
    all.stream().skip(skip).limit(pageSize).forEach(value::add);
    if (skip + pageSize < all.size()) {
      out.put("nextLink", endpoint().resolve(rawPath) + "?api-version=" + q.get("api-version") + "&$skiptoken="
          + (skip + pageSize));
    }
    return Answer.ok(out);
  }

  // ---------------------------------------------------------------- JSON views

  private ObjectNode vmJson(Vm vm) {
    ObjectNode o = F.objectNode().put("name", vm.name).put("id", vm.id()).put("type", "Microsoft.Compute/virtualMachines")
        .put("location", location);
    ObjectNode props = o.putObject("properties").put("vmId", UUID.nameUUIDFromBytes(vm.id().getBytes(StandardCharsets.UTF_8))
        .toString()).put("provisioningState", "Succeeded");
    props.putObject("osProfile").put("computerName", vm.name);
    props.putObject("hardwareProfile").put("vmSize", "Standard_D2s_v3");
    if (vm.scaleSet != null) {
      props.putObject("virtualMachineScaleSet").put("id", vm.scaleSet);
    }
    ArrayNode refs = props.putObject("networkProfile").putArray("networkInterfaces");
    String primary = vm.nics.get(vm.nics.size() - 1);
    for (String n : vm.nics) {
      ObjectNode r = refs.addObject().put("id", n);
      if (vm.nics.size() > 1 || vm.primaryFlagged) {
        r.putObject("properties").put("primary", n.equals(primary));
      }
    }
    return o;
  }

  private ObjectNode nicJson(Nic nic) {
    ObjectNode o = F.objectNode().put("name", nic.name).put("id", nic.id()).put("etag", nic.etag)
        .put("type", "Microsoft.Network/networkInterfaces").put("location", location);
    o.set("tags", nic.tags.deepCopy());
    ObjectNode props = o.putObject("properties").put("provisioningState", nic.state).put("resourceGuid", nic.guid)
        .put("macAddress", "00-0D-3A-" + String.format("%02X-%02X-%02X", nic.guid.charAt(0) & 0xff,
            nic.guid.charAt(1) & 0xff, nic.guid.charAt(2) & 0xff))
        .put("primary", true).put("enableIPForwarding", nic.ipForwarding)
        .put("enableAcceleratedNetworking", nic.acceleratedNetworking).put("nicType", "Standard");
    if (nic.nsgId != null) {
      props.putObject("networkSecurityGroup").put("id", nic.nsgId);
    }
    if (nic.vmId != null) {
      props.putObject("virtualMachine").put("id", nic.vmId);
      Vm vm = vms.get(nic.vmId.toLowerCase(Locale.ROOT));
      props.put("primary", vm == null ? nic.scaleSetVmId != null : vm.nics.get(vm.nics.size() - 1)
          .equalsIgnoreCase(nic.id()));
    }
    ObjectNode dns = props.putObject("dnsSettings");
    nic.dnsServers.forEach(dns.putArray("dnsServers")::add);
    nic.dnsServers.forEach(dns.putArray("appliedDnsServers")::add);
    ArrayNode cfgs = props.putArray("ipConfigurations");
    nic.configs.forEach(c -> cfgs.add(configJson(nic, c)));
    return o;
  }

  private ObjectNode configJson(Nic nic, ObjectNode stored) {
    ObjectNode c = F.objectNode().put("name", stored.get("name").asText())
        .put("id", nic.id() + "/ipConfigurations/" + stored.get("name").asText()).put("etag", nic.etag)
        .put("type", "Microsoft.Network/networkInterfaces/ipConfigurations");
    ObjectNode props = stored.get("properties").deepCopy();
    props.put("provisioningState", nic.state);
    c.set("properties", props);
    return c;
  }

  private ObjectNode vnetJson(Vnet v, boolean expand) {
    ObjectNode o = F.objectNode().put("name", v.name).put("id", v.id()).put("etag", "W/\"" + UUID.nameUUIDFromBytes(
        v.id().getBytes(StandardCharsets.UTF_8)) + "\"").put("type", "Microsoft.Network/virtualNetworks")
        .put("location", location);
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode space = props.putObject("addressSpace").putArray("addressPrefixes");
    v.prefixes.forEach(space::add);
    ArrayNode subnets = props.putArray("subnets");
    v.subnets.values().forEach(s -> subnets.add(subnetJson(s, expand)));
    return o;
  }

  /** Everything holding an address in the subnet: {id, ip}. */
  private List<String[]> holdersIn(Subnet s) {
    List<String[]> out = new ArrayList<>();
    for (Nic nic : nics.values()) {
      for (ObjectNode c : nic.configs) {
        if (c.path("properties").path("subnet").path("id").asText().equalsIgnoreCase(s.id())) {
          out.add(new String[] {nic.id() + "/ipConfigurations/" + c.get("name").asText(),
              c.path("properties").path("privateIPAddress").asText()});
        }
      }
    }
    for (Lb lb : lbs.values()) {
      for (String[] fe : lb.frontends) {
        if (fe[1].equalsIgnoreCase(s.id())) {
          out.add(new String[] {lb.id() + "/frontendIPConfigurations/" + fe[0], fe[2]});
        }
      }
    }
    for (String[] h : otherHolders) {
      if (h[1].equalsIgnoreCase(s.id())) {
        out.add(new String[] {h[0], h[2]});
      }
    }
    return out;
  }

  private ObjectNode subnetJson(Subnet s, boolean expand) {
    ObjectNode o = F.objectNode().put("name", s.name).put("id", s.id()).put("etag", "W/\"" + UUID.nameUUIDFromBytes(
        s.id().getBytes(StandardCharsets.UTF_8)) + "\"").put("type", "Microsoft.Network/virtualNetworks/subnets");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    if (s.prefixes.size() == 1) {
      props.put("addressPrefix", s.prefixes.get(0).text());
    } else {
      ArrayNode ps = props.putArray("addressPrefixes");
      s.prefixes.forEach(c -> ps.add(c.text()));
    }
    ArrayNode cfgs = props.putArray("ipConfigurations");
    for (String[] h : holdersIn(s)) {
      // Azure upper-cases these references
      ObjectNode ref = cfgs.addObject().put("id", h[0].toUpperCase(Locale.ROOT));
      if (expand) {
        ref.putObject("properties").put("privateIPAddress", h[1]).put("provisioningState", "Succeeded");
      }
    }
    if (cfgs.isEmpty()) {
      props.remove("ipConfigurations");
    }
    return o;
  }

  private Answer checkIp(Vnet v, String ip) {
    if (ip == null || !Cidr.isAddress(ip)) {
      throw new ArmError(400, "InvalidRequestFormat", "ipAddress is required");
    }
    Subnet s = v.subnets.values().stream().filter(x -> x.prefixFor(ip).isPresent()).findFirst()
        .orElseThrow(() -> new ArmError(400, "PrivateIPAddressNotInSubnet", ip + " is in no subnet of " + v.id()));
    Cidr prefix = s.prefixFor(ip).orElseThrow();
    boolean available = !prefix.reserved(ip) && holderOf(ip, null).isEmpty() && !quarantined(ip);
    ObjectNode out = F.objectNode().put("available", available);
    if (!available) {
      ArrayNode alt = out.putArray("availableIPAddresses");
      BigInteger n = prefix.base().add(BigInteger.valueOf(4));
      while (alt.size() < 5 && n.compareTo(prefix.last()) < 0) {
        String cand = Cidr.toText(n, prefix.v4());
        if (holderOf(cand, null).isEmpty() && !quarantined(cand)) {
          alt.add(cand);
        }
        n = n.add(BigInteger.ONE);
      }
    }
    return Answer.ok(out);
  }

  private Answer usages(Vnet v) {
    ObjectNode out = F.objectNode();
    ArrayNode value = out.putArray("value");
    for (Subnet s : v.subnets.values()) {
      long limit = s.prefixes.stream().filter(Cidr::v4).mapToLong(c -> c.size().longValue() - 5).sum();
      ObjectNode u = value.addObject().put("id", s.id()).put("currentValue", holdersIn(s).size()).put("limit", limit)
          .put("unit", "Count");
      u.putObject("name").put("value", "SubnetSpace").put("localizedValue", "Subnet size and usage");
    }
    return Answer.ok(out);
  }

  private List<String> backendIpConfigurations(Lb lb, String pool) {
    String poolId = (lb.id() + "/backendAddressPools/" + pool).toLowerCase(Locale.ROOT);
    List<String> out = new ArrayList<>();
    for (Nic nic : nics.values()) {
      for (ObjectNode c : nic.configs) {
        for (JsonNode p : c.path("properties").path("loadBalancerBackendAddressPools")) {
          if (p.path("id").asText().equalsIgnoreCase(poolId)) {
            out.add(nic.id() + "/ipConfigurations/" + c.get("name").asText());
          }
        }
      }
    }
    return out;
  }

  private ObjectNode poolJson(Lb lb, String pool) {
    ObjectNode o = F.objectNode().put("name", pool).put("id", lb.id() + "/backendAddressPools/" + pool)
        .put("etag", "W/\"" + UUID.randomUUID() + "\"").put("type", "Microsoft.Network/loadBalancers/backendAddressPools");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode members = props.putArray("backendIPConfigurations");
    backendIpConfigurations(lb, pool).forEach(id -> members.addObject().put("id", id));
    if (lb.outbound.contains(pool.toLowerCase(Locale.ROOT))) {
      props.putObject("outboundRule").put("id", lb.id() + "/outboundRules/outbound-rule-v4");
      props.putArray("outboundRules").addObject().put("id", lb.id() + "/outboundRules/outbound-rule-v4");
    }
    return o;
  }

  private ObjectNode lbJson(Lb lb) {
    ObjectNode o = F.objectNode().put("name", lb.name).put("id", lb.id()).put("type", "Microsoft.Network/loadBalancers")
        .put("location", location).put("etag", "W/\"" + UUID.randomUUID() + "\"");
    o.putObject("sku").put("name", "Standard");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode fes = props.putArray("frontendIPConfigurations");
    for (String[] fe : lb.frontends) {
      ObjectNode f = fes.addObject().put("name", fe[0]).put("id", lb.id() + "/frontendIPConfigurations/" + fe[0]);
      ObjectNode fp = f.putObject("properties").put("privateIPAddress", fe[2]).put("privateIPAllocationMethod", "Static");
      fp.putObject("subnet").put("id", fe[1]);
    }
    ArrayNode pools = props.putArray("backendAddressPools");
    lb.pools.values().forEach(p -> pools.add(poolJson(lb, p)));
    ArrayNode rules = props.putArray("outboundRules");
    if (!lb.outbound.isEmpty()) {
      rules.addObject().put("name", "outbound-rule-v4").put("id", lb.id() + "/outboundRules/outbound-rule-v4");
    }
    props.putArray("loadBalancingRules");
    props.putArray("probes");
    props.putArray("inboundNatRules");
    return o;
  }

  // ---------------------------------------------------------------- operations

  private Answer operation(String id) {
    Operation op = operations.get(id.toLowerCase(Locale.ROOT));
    if (op == null) {
      throw new ArmError(404, "OperationNotFound", "operation " + id + " not found");
    }
    op.polls++;
    if ("InProgress".equals(op.status) && op.polls >= pollsUntilDone
        && !Instant.now().isBefore(op.started.plus(operationTime))) {
      finish(op);
    }
    ObjectNode out = F.objectNode().put("id", "/subscriptions/" + subscription + "/providers/Microsoft.Network/locations/"
        + location + "/operations/" + op.id).put("name", op.id).put("status", op.status)
        .put("startTime", op.started.toString());
    Map<String, String> h = Map.of();
    if ("InProgress".equals(op.status)) {
      h = Map.of("Retry-After", String.valueOf(retryAfterSeconds));
    } else {
      out.put("endTime", Instant.now().toString());
    }
    if (op.failure != null && "Failed".equals(op.status)) {
      ObjectNode err = out.putObject("error").put("code", op.failure[0]).put("message", op.failure[1]);
      err.putArray("details");
    }
    return new Answer(200, out, h);
  }

  private void finish(Operation op) {
    Nic nic = nics.get(op.nicKey);
    if (op.failure != null) {
      op.status = "Failed";
      if (nic != null) {
        nic.configs = op.rollback;
        nic.state = "Failed";
        nic.etag = newEtag();
      }
    } else {
      op.status = "Succeeded";
      if (nic != null) {
        nic.state = "Succeeded";
      }
    }
    if (nic != null && op.id.equals(nic.runningOperation)) {
      nic.runningOperation = null;
    }
  }

  private String operationUrl(String id) {
    return endpoint() + "subscriptions/" + subscription + "/providers/Microsoft.Network/locations/" + location
        + "/operations/" + id + "?api-version=" + NETWORK_API;
  }

  // ---------------------------------------------------------------- NIC PUT

  private Answer putNic(String key, String rg, String name, Map<String, String> headers, String body) {
    JsonNode in = nicBody(body);
    Nic nic = nics.get(key);
    checkNicPreconditions(nic, name, headers);
    boolean create = nic == null;
    Nic target = create ? new Nic(rg, name) : nic;
    String nicId = target.id();
    List<ObjectNode> next = configsFromBody(in, nicId);
    checkPrimary(create ? null : target, next, nicId);
    Map<String, String> taken = new HashMap<>(); // ip -> config id within this body
    for (ObjectNode c : next) {
      resolveConfig(c, target, create, next, taken);
    }
    if (next.stream().anyMatch(c -> "IPv6".equals(c.path("properties").path("privateIPAddressVersion").asText())
        && c.path("properties").path("primary").asBoolean())) {
      throw new ArmError(400, "IPv6IpConfigurationCannotBePrimary", "the primary IP configuration of " + nicId
          + " must be IPv4.");
    }
    String nsg = in.get("properties").path("networkSecurityGroup").path("id").asText(null);
    if (nsg != null && !nsgs.containsKey(nsg.toLowerCase(Locale.ROOT))) {
      throw referenceNotFound(nsg, nicId);
    }
    return acceptNicPut(key, target, create, in, next, taken.keySet());
  }

  private static JsonNode nicBody(String body) {
    JsonNode in;
    try {
      in = JSON.readTree(body);
    } catch (IOException e) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request.");
    }
    if (in == null || !in.isObject() || !in.path("properties").path("ipConfigurations").isArray()) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request.");
    }
    return in;
  }

  /** If-Match, If-None-Match and an operation still running on the NIC. */
  private void checkNicPreconditions(Nic nic, String name, Map<String, String> headers) {
    String ifMatch = headers.get("if-match");
    String ifNoneMatch = headers.get("if-none-match");
    if (ifMatch != null && enforceIfMatch && (nic == null ? true : !"*".equals(ifMatch) && !ifMatch.equals(nic.etag))) {
      throw new ArmError(412, "PreconditionFailedEtagMismatch", "Precondition failed: the etag " + ifMatch
          + " does not match the current etag of " + name + ".");
    }
    if ("*".equals(ifNoneMatch) && nic != null) {
      throw new ArmError(412, "PreconditionFailed", "The resource " + name + " already exists.");
    }
    if (nic != null && nic.runningOperation != null) {
      throw new ArmError(409, "AnotherOperationInProgress", "Another operation on this or dependent resource is in "
          + "progress. To retrieve status of the operation use uri: " + operationUrl(nic.runningOperation) + ".");
    }
  }

  /** The body's ipConfigurations as they will be stored: named, unique, with Azure's defaults, read-only fields dropped. */
  private static List<ObjectNode> configsFromBody(JsonNode in, String nicId) {
    List<ObjectNode> next = new ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    for (JsonNode c : in.path("properties").path("ipConfigurations")) {
      if (!c.isObject() || !c.path("name").isTextual() || c.path("name").asText().isBlank()) {
        throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request: an ipConfiguration has no name.");
      }
      if (!names.add(c.get("name").asText().toLowerCase(Locale.ROOT))) {
        throw new ArmError(400, "DuplicateResourceName", "Network interface " + nicId + " has two ipConfigurations named "
            + c.get("name").asText() + ".");
      }
      ObjectNode stored = F.objectNode().put("name", c.get("name").asText());
      ObjectNode props = c.path("properties").isObject() ? ((ObjectNode) c.get("properties")).deepCopy() : F.objectNode();
      props.remove("provisioningState"); // read-only input is ignored
      if (!props.has("primary")) {
        props.put("primary", false);
      }
      if (!props.has("privateIPAddressVersion")) {
        props.put("privateIPAddressVersion", "IPv4");
      }
      stored.set("properties", props);
      next.add(stored);
    }
    if (next.isEmpty()) {
      throw new ArmError(400, "NetworkInterfaceMustHaveAtLeastOneIpConfiguration", "Network interface " + nicId
          + " must have at least one IP configuration.");
    }
    return next;
  }

  /** Exactly one primary (a lone configuration is it), the existing primary kept, and the NIC's limit. */
  private void checkPrimary(Nic existing, List<ObjectNode> next, String nicId) {
    if (existing != null) {
      ObjectNode oldPrimary = existing.configs.stream().filter(c -> c.path("properties").path("primary").asBoolean())
          .findFirst().orElse(null);
      if (oldPrimary != null && next.stream().noneMatch(c -> c.get("name").asText()
          .equalsIgnoreCase(oldPrimary.get("name").asText()) && c.path("properties").path("primary").asBoolean())) {
        throw new ArmError(400, "IpConfigDeleteNotSupported", "IP Configuration " + oldPrimary.get("name").asText()
            + " cannot be deleted. Deletion and renaming of primary IP Configuration is not supported");
      }
    }
    if (next.size() == 1) {
      ((ObjectNode) next.get(0).get("properties")).put("primary", true);
    }
    long primaries = next.stream().filter(c -> c.path("properties").path("primary").asBoolean()).count();
    if (primaries == 0) {
      throw new ArmError(400, "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary", "Network Interface " + nicId
          + " specifies multiple IPConfigurations but none of the IPConfigurations is specified as Primary.");
    }
    if (primaries > 1) {
      throw new ArmError(400, TWO_PRIMARIES_CODE, "Network Interface " + nicId + " has more than one primary "
          + "IPConfiguration (the fake's code: Azure's is not documented).");
    }
    if (next.size() > nicLimit) {
      throw new ArmError(400, NIC_LIMIT_CODE, "Network interface " + nicId + " has " + next.size()
          + " IP configurations; the limit is " + nicLimit + " (the fake's code: Azure's is not documented).");
    }
  }

  private static ArmError referenceNotFound(String id, String nicId) {
    return new ArmError(400, "InvalidResourceReference", "Resource " + id + " referenced by resource " + nicId
        + " was not found. Please make sure that the referenced resource exists, and that both resources are in"
        + " the same region.");
  }

  /** One configuration's references (subnet, backend pools) and address, as Azure checks and stores them. */
  private void resolveConfig(ObjectNode c, Nic target, boolean create, List<ObjectNode> next, Map<String, String> taken) {
    ObjectNode props = (ObjectNode) c.get("properties");
    String nicId = target.id();
    String cfgId = nicId + "/ipConfigurations/" + c.get("name").asText();
    String subnetId = props.path("subnet").path("id").asText(null);
    Subnet s = subnetId == null ? null : subnet(subnetId).orElse(null);
    if (s == null) {
      throw referenceNotFound(subnetId, nicId);
    }
    props.putObject("subnet").put("id", s.id()); // canonical casing
    resolvePools(props, nicId, cfgId);
    boolean v6 = "IPv6".equalsIgnoreCase(props.path("privateIPAddressVersion").asText());
    props.put("privateIPAddressVersion", v6 ? "IPv6" : "IPv4");
    String method = props.path("privateIPAllocationMethod").asText("Dynamic");
    String ip;
    if ("Dynamic".equalsIgnoreCase(method)) {
      ObjectNode existing = create ? null : target.configs.stream().filter(x -> x.get("name").asText()
          .equalsIgnoreCase(c.get("name").asText())).findFirst().orElse(null);
      String had = existing == null ? null : existing.path("properties").path("privateIPAddress").asText(null);
      if (had != null && s.prefixFor(had).isPresent()) {
        ip = had; // a dynamic address stays while its config does
      } else {
        ip = nextFree(s, !v6, target, next).orElseThrow(() -> new ArmError(400, "SubnetIsFull", "Subnet " + s.name
            + " with address prefix " + s.prefixes.get(0).text() + " does not have enough capacity for 1 IP addresses."));
      }
      props.put("privateIPAddress", ip);
      props.put("privateIPAllocationMethod", "Dynamic");
    } else {
      ip = staticAddress(props.path("privateIPAddress").asText(null), v6, s, cfgId, target, create, taken);
      props.put("privateIPAddress", ip);
      props.put("privateIPAllocationMethod", "Static");
    }
    taken.put(ip, cfgId);
  }

  /** The backend pools must exist, and a secondary configuration cannot be in a pool an outbound rule uses. */
  private void resolvePools(ObjectNode props, String nicId, String cfgId) {
    ArrayNode pools = F.arrayNode();
    for (JsonNode p : props.path("loadBalancerBackendAddressPools")) {
      String poolId = p.path("id").asText("");
      Optional<String[]> lbPool = pool(poolId);
      if (lbPool.isEmpty()) {
        throw referenceNotFound(poolId, nicId);
      }
      Lb lb = lbs.get(lbPool.get()[0]);
      if (!props.path("primary").asBoolean() && lb.outbound.contains(lbPool.get()[1].toLowerCase(Locale.ROOT))) {
        throw new ArmError(400, "OutboundRuleCannotBeUsedWithBackendAddressPoolThatIsReferencedBySecondaryIpConfigs",
            "OutboundRule " + lb.id() + "/outboundRules/outbound-rule-v4 cannot be used with Backend Address Pool "
            + lb.id() + "/backendAddressPools/" + lbPool.get()[1] + " that contains Secondary IPConfig " + cfgId);
      }
      pools.addObject().put("id", lb.id() + "/backendAddressPools/" + lbPool.get()[1]);
    }
    if (props.has("loadBalancerBackendAddressPools")) {
      props.set("loadBalancerBackendAddressPools", pools);
    }
  }

  /** A static address, canonical: of the right version, in the subnet, not reserved, held by nobody else. */
  private String staticAddress(String ip, boolean v6, Subnet s, String cfgId, Nic target, boolean create,
      Map<String, String> taken) {
    if (ip == null || !Cidr.isAddress(ip)) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request: privateIPAddress '" + ip + "'.");
    }
    if (ip.contains(":") != v6) {
      throw new ArmError(400, "PrivateIPAddressVersionMismatch", "IP configuration " + cfgId + " has address " + ip
          + " of the wrong version.");
    }
    Optional<Cidr> prefix = s.prefixFor(ip);
    if (prefix.isEmpty()) {
      throw new ArmError(400, "PrivateIPAddressNotInSubnet", "IP configuration " + cfgId + " uses the private IP "
          + "address " + ip + " which is outside of the subnet range " + s.id() + ".");
    }
    if (prefix.get().reserved(ip)) {
      throw new ArmError(400, "PrivateIPAddressInReservedRange", "IP configuration " + cfgId + " uses the private "
          + "IP address " + ip + " which is in a reserved range (includes an address range required by Azure).");
    }
    String canonical = Cidr.toText(Cidr.toNumber(ip), !v6);
    Optional<String> holder = holderOf(canonical, target);
    if (holder.isEmpty() && taken.containsKey(canonical)) {
      holder = Optional.of(taken.get(canonical));
    }
    if (holder.isPresent()) {
      throw new ArmError(400, "PrivateIPAddressIsAllocated", "IP configuration " + cfgId + " is using the private IP "
          + "address " + canonical + " which is already allocated to resource " + holder.get() + ".");
    }
    boolean hadIt = !create && target.configs.stream().anyMatch(x -> canonical.equals(
        x.path("properties").path("privateIPAddress").asText()));
    if (!hadIt && quarantined(canonical)) {
      throw new ArmError(400, "PrivateIPAddressIsAllocated", "IP configuration " + cfgId + " is using the private IP "
          + "address " + canonical + " which is already allocated to resource (being cleaned up).");
    }
    return canonical;
  }

  /**
   * The PUT is accepted: released addresses are quarantined, the body stored, and a long-running
   * operation started (finished at once, or left running for the polls, as the put mode says).
   */
  private Answer acceptNicPut(String key, Nic target, boolean create, JsonNode in, List<ObjectNode> next,
      java.util.Set<String> kept) {
    List<ObjectNode> before = target.configs;
    if (!create) {
      for (ObjectNode c : before) {
        String ip = c.path("properties").path("privateIPAddress").asText();
        if (!kept.contains(ip)) {
          quarantine.put(ip, Instant.now());
        }
      }
    }
    target.configs = next;
    nicSettingsFromBody(target, (ObjectNode) in.get("properties"), in);
    target.etag = newEtag();
    if (create) {
      nics.put(key, target);
    }
    String opId = UUID.randomUUID().toString();
    Operation op = new Operation(opId, key);
    op.rollback = before;
    if (!failOperations.isEmpty()) {
      op.failure = failOperations.remove(0);
    }
    operations.put(opId.toLowerCase(Locale.ROOT), op);
    Map<String, String> h = new LinkedHashMap<>();
    h.put("Retry-After", String.valueOf(retryAfterSeconds));
    if (putMode == PutMode.SUCCEEDED && op.failure == null) {
      finish(op);
    } else {
      target.state = create ? "Creating" : "Updating";
      target.runningOperation = opId;
    }
    if (putMode != PutMode.UPDATING_WITHOUT_ASYNC_HEADER) {
      h.put("Azure-AsyncOperation", operationUrl(opId));
    } else {
      // the SDK then polls the NIC itself: the operation ends on the polls of the NIC
      op.polls = 0;
    }
    return new Answer(create ? 201 : 200, nicJson(target), h);
  }

  /** A PUT replaces the NIC's settings: what its body leaves out is reset (no NSG, no DNS servers, off, no tags). */
  private void nicSettingsFromBody(Nic target, ObjectNode props, JsonNode in) {
    String nsg = props.path("networkSecurityGroup").path("id").asText(null);
    target.nsgId = nsg == null ? null : nsgs.get(nsg.toLowerCase(Locale.ROOT));
    List<String> dns = new ArrayList<>();
    props.path("dnsSettings").path("dnsServers").forEach(d -> dns.add(d.asText()));
    target.dnsServers = List.copyOf(dns);
    target.acceleratedNetworking = props.path("enableAcceleratedNetworking").asBoolean(false);
    target.ipForwarding = props.path("enableIPForwarding").asBoolean(false);
    target.tags = in.path("tags").isObject() ? ((ObjectNode) in.get("tags")).deepCopy() : F.objectNode();
  }

  /** Advances operations polled through the resource (no async header mode). */
  private void advanceByResourcePoll(Nic nic) {
    if (nic.runningOperation != null && putMode == PutMode.UPDATING_WITHOUT_ASYNC_HEADER) {
      Operation op = operations.get(nic.runningOperation.toLowerCase(Locale.ROOT));
      op.polls++;
      if (op.polls > pollsUntilDone && !Instant.now().isBefore(op.started.plus(operationTime))) {
        finish(op);
      }
    }
  }

  private Optional<Subnet> subnet(String id) {
    String low = id.toLowerCase(Locale.ROOT);
    int at = low.indexOf("/subnets/");
    if (at < 0) {
      return Optional.empty();
    }
    Vnet v = vnets.get(low.substring(0, at));
    return v == null ? Optional.empty() : Optional.ofNullable(v.subnets.get(low.substring(at + "/subnets/".length())));
  }

  /** {lb key, pool name} of a pool id. */
  private Optional<String[]> pool(String id) {
    String low = id.toLowerCase(Locale.ROOT);
    int at = low.indexOf("/backendaddresspools/");
    if (at < 0) {
      return Optional.empty();
    }
    Lb lb = lbs.get(low.substring(0, at));
    if (lb == null) {
      return Optional.empty();
    }
    String name = lb.pools.get(low.substring(at + "/backendaddresspools/".length()));
    return name == null ? Optional.empty() : Optional.of(new String[] {lb.id().toLowerCase(Locale.ROOT), name});
  }

  /** Who holds {@code ip}, other than NIC {@code except}. */
  private Optional<String> holderOf(String ip, Nic except) {
    for (Nic nic : nics.values()) {
      if (nic == except) {
        continue;
      }
      for (ObjectNode c : nic.configs) {
        String held = c.path("properties").path("privateIPAddress").asText("");
        if (!held.isEmpty() && sameAddress(held, ip)) {
          return Optional.of(nic.id() + "/ipConfigurations/" + c.get("name").asText());
        }
      }
    }
    for (Lb lb : lbs.values()) {
      for (String[] fe : lb.frontends) {
        if (sameAddress(fe[2], ip)) {
          return Optional.of(lb.id() + "/frontendIPConfigurations/" + fe[0]);
        }
      }
    }
    for (String[] h : otherHolders) {
      if (sameAddress(h[2], ip)) {
        return Optional.of(h[0]);
      }
    }
    return Optional.empty();
  }

  private static boolean sameAddress(String a, String b) {
    return a.contains(":") == b.contains(":") && Cidr.toNumber(a).equals(Cidr.toNumber(b));
  }

  private boolean quarantined(String ip) {
    Instant at = quarantine.get(ip);
    return at != null && Instant.now().isBefore(at.plus(quarantineTime));
  }

  private Optional<String> nextFree(Subnet s, boolean v4, Nic nic, List<ObjectNode> body) {
    for (Cidr c : s.prefixes) {
      if (c.v4() != v4) {
        continue;
      }
      BigInteger n = c.base().add(BigInteger.valueOf(4));
      BigInteger end = c.last();
      int tries = 0;
      while (n.compareTo(end) < 0 && tries++ < 1_000_000) {
        String cand = Cidr.toText(n, v4);
        boolean inBody = body.stream().anyMatch(x -> cand.equals(x.path("properties").path("privateIPAddress").asText()));
        boolean onNic = nic.configs.stream().anyMatch(x -> cand.equals(x.path("properties").path("privateIPAddress")
            .asText()));
        if (!inBody && !onNic && holderOf(cand, nic).isEmpty() && !quarantined(cand)) {
          return Optional.of(cand);
        }
        n = n.add(BigInteger.ONE);
      }
    }
    return Optional.empty();
  }

  private static String newEtag() {
    return "W/\"" + UUID.randomUUID() + "\"";
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
