package org.ipamoperators.keepalived.config;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.ipamoperators.core.address.Ip;

/**
 * What a {@code KeepalivedGroup} says about the keepalived configuration of its nodes: the old keepalived-operator
 * fields ({@code interface}, {@code interfaceFromIP}, {@code unicastEnabled}, {@code passwordAuth} resolved to the
 * password, {@code verbatimConfig}) and the new VRRP settings. Validated on construction; build one with
 * {@link #builder(String, String)}.
 *
 * @param namespace namespace of the group
 * @param name name of the group, written as keepalived's {@code router_id}
 * @param interfaceName the NIC every instance runs on, unless a node says otherwise ({@link KeepalivedNode})
 * @param interfaceFromIp the group asks each node to use the NIC that routes to this address; the nodes then carry
 *     the resolved name. {@code interfaceName} is optional when this is set
 * @param unicast send adverts to the other nodes' addresses instead of the VRRP multicast group
 * @param password VRRP PASS authentication; keepalived uses the first 8 characters. Needs VRRPv2, so IPv4 instances
 *     fall back to VRRPv2 with whole-second adverts and IPv6 instances (VRRPv3 only) go unauthenticated
 * @param verbatimConfig {@code key value} lines for {@code global_defs} (checked by {@link Verbatim#checkGlobal})
 * @param vrrpVersion 3 (default, needed for sub-second adverts and for IPv6) or 2 (IPv4 only; IPv6 instances always
 *     use 3)
 * @param advertInterval time between adverts of a master. The trade-off: a backup takes over after about
 *     {@code 3 x advertInterval + skew} (skew = {@code (256 - priority) / 256 x advertInterval}), and every
 *     instance's master sends {@code 1 / advertInterval} adverts per second to every node. Default 100 ms
 *     (takeover about 0.36 s, 10 adverts/s per instance); keepalived's own default is 1 s (about 3.6 s, 1/s).
 *     VRRPv3: 10 ms to 40.95 s in steps of 10 ms; VRRPv2: whole seconds, 1 to 255
 * @param priority priority of the first backup of an instance; the next ones get 10 less each (at least 1), in an
 *     order of their own per instance, so exactly one backup takes over when the master dies
 * @param ownerPriority priority of the preferred node of an instance (spread VIPs, shared instances); higher than
 *     {@code priority}, so that node takes its instances
 * @param preempt whether the preferred node of an instance takes its VIPs back when it returns (false renders
 *     {@code nopreempt}). Instances without a preferred node never preempt: their VIPs stay where they are when a
 *     node comes back, which saves a second move
 * @param preemptDelay delay before such a take-over at start-up ({@code preempt_delay}); zero for none
 * @param sharedInstances 0 (default): one VRRP instance and router id per service (per VIP with spread VIPs), as
 *     keepalived-operator does, so at most 255 services per group. N in 1..255: the services share N instances
 *     (keys {@code shared:0} .. {@code shared:N-1}), any number of VIPs each, so a group is not limited by router
 *     ids; see {@link InstancePlanner}
 * @param maxAdvertisedVips VIPs of an instance listed in its adverts ({@code virtual_ipaddress}); the rest go to
 *     {@code virtual_ipaddress_excluded}: added and removed the same way, only left out of the adverts. keepalived
 *     rejects more than fit in a packet (255 IPv4 or 89 IPv6 addresses at MTU 1500)
 * @param healthCheckCommand absolute path of curl in the keepalived image, for services with
 *     {@code externalTrafficPolicy: Local}
 */
public record GroupSettings(
    String namespace,
    String name,
    Optional<String> interfaceName,
    Optional<Ip> interfaceFromIp,
    boolean unicast,
    Optional<String> password,
    SortedMap<String, String> verbatimConfig,
    int vrrpVersion,
    Duration advertInterval,
    int priority,
    int ownerPriority,
    boolean preempt,
    Duration preemptDelay,
    int sharedInstances,
    int maxAdvertisedVips,
    String healthCheckCommand) {

  /** The fast default: VRRPv3 adverts every 100 ms. */
  public static final Duration DEFAULT_ADVERT_INTERVAL = Duration.ofMillis(100);
  public static final int DEFAULT_PRIORITY = 100;
  public static final int DEFAULT_OWNER_PRIORITY = 200;
  public static final int DEFAULT_MAX_ADVERTISED_VIPS = 16;
  /** Below keepalived's packet limit for IPv6 even at the minimum IPv6 MTU (77 addresses at 1280 bytes). */
  public static final int MAX_ADVERTISED_VIPS_LIMIT = 64;
  public static final String DEFAULT_HEALTH_CHECK_COMMAND = "/usr/bin/curl";
  /** keepalived uses only the first 8 characters of a PASS password. */
  public static final int PASSWORD_LENGTH = 8;

  private static final Pattern INTERFACE = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
  private static final Pattern PASSWORD = Pattern.compile("[\\x21-\\x7e&&[^\"#!{}\\\\$]]+");
  private static final Pattern COMMAND = Pattern.compile("/[A-Za-z0-9_./+-]+");

  public GroupSettings {
    KubernetesNames.requireName("KeepalivedGroup namespace", namespace);
    KubernetesNames.requireName("KeepalivedGroup name", name);
    Objects.requireNonNull(interfaceName, "interfaceName");
    Objects.requireNonNull(interfaceFromIp, "interfaceFromIp");
    Objects.requireNonNull(password, "password");
    Objects.requireNonNull(verbatimConfig, "verbatimConfig");
    Objects.requireNonNull(advertInterval, "advertInterval");
    Objects.requireNonNull(preemptDelay, "preemptDelay");
    interfaceName.ifPresent(GroupSettings::requireInterfaceName);
    if (interfaceName.isEmpty() && interfaceFromIp.isEmpty()) {
      throw new IllegalArgumentException("Set interface or interfaceFromIP");
    }
    password.ifPresent(p -> {
      if (!PASSWORD.matcher(p).matches()) {
        throw new IllegalArgumentException("The VRRP password must be printable ASCII without spaces and without any"
            + " of \" # ! { } \\ $ (they would break keepalived.conf)");
      }
    });
    Verbatim.Checked global = Verbatim.checkGlobal(verbatimConfig);
    if (!global.rejected().isEmpty()) {
      throw new IllegalArgumentException("verbatimConfig refused: " + global.rejected());
    }
    verbatimConfig = global.accepted();
    if (vrrpVersion != 2 && vrrpVersion != 3) {
      throw new IllegalArgumentException("vrrpVersion must be 2 or 3: " + vrrpVersion);
    }
    checkAdvertInterval(vrrpVersion, advertInterval);
    if (priority < 1 || priority > 254) {
      throw new IllegalArgumentException("priority must be in 1..254: " + priority);
    }
    if (ownerPriority <= priority || ownerPriority > 254) {
      throw new IllegalArgumentException("ownerPriority must be above priority (" + priority + ") and at most 254: "
          + ownerPriority);
    }
    if (preemptDelay.isNegative() || preemptDelay.compareTo(Duration.ofSeconds(1000)) > 0
        || preemptDelay.toMillis() % 10 != 0 || preemptDelay.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException("preemptDelay must be 0 to 1000 s in steps of 10 ms: " + preemptDelay);
    }
    if (sharedInstances < 0 || sharedInstances > 255) {
      throw new IllegalArgumentException("sharedInstances must be in 0..255: " + sharedInstances);
    }
    if (maxAdvertisedVips < 1 || maxAdvertisedVips > MAX_ADVERTISED_VIPS_LIMIT) {
      throw new IllegalArgumentException("maxAdvertisedVips must be in 1.." + MAX_ADVERTISED_VIPS_LIMIT + ": "
          + maxAdvertisedVips);
    }
    if (healthCheckCommand == null || !COMMAND.matcher(healthCheckCommand).matches()) {
      throw new IllegalArgumentException("healthCheckCommand must be an absolute path: " + healthCheckCommand);
    }
  }

  /** Settings with the defaults: VRRPv3 every 100 ms, multicast, priorities 100/200, preemption, one instance per service. */
  public static Builder builder(String namespace, String name) {
    return new Builder(namespace, name);
  }

  /** A builder holding these settings, to change some. */
  public Builder toBuilder() {
    Builder b = new Builder(namespace, name);
    b.interfaceName = interfaceName;
    b.interfaceFromIp = interfaceFromIp;
    b.unicast = unicast;
    b.password = password;
    b.verbatimConfig = new TreeMap<>(verbatimConfig);
    b.vrrpVersion = vrrpVersion;
    b.advertInterval = advertInterval;
    b.priority = priority;
    b.ownerPriority = ownerPriority;
    b.preempt = preempt;
    b.preemptDelay = preemptDelay;
    b.sharedInstances = sharedInstances;
    b.maxAdvertisedVips = maxAdvertisedVips;
    b.healthCheckCommand = healthCheckCommand;
    return b;
  }

  /** {@code namespace/name}. */
  public String key() {
    return namespace + "/" + name;
  }

  static void requireInterfaceName(String name) {
    if (!INTERFACE.matcher(name).matches()) {
      throw new IllegalArgumentException("Not a network interface name (1-15 of [A-Za-z0-9_.-]): '" + name + "'");
    }
  }

  private static void checkAdvertInterval(int version, Duration interval) {
    long nanos = interval.toNanos();
    if (version == 3) {
      if (nanos % 10_000_000L != 0 || nanos < 10_000_000L || nanos > 40_950_000_000L) {
        throw new IllegalArgumentException("With VRRPv3 the advert interval must be 10 ms to 40.95 s in steps of"
            + " 10 ms: " + interval);
      }
    } else if (nanos % 1_000_000_000L != 0 || nanos < 1_000_000_000L || nanos > 255_000_000_000L) {
      throw new IllegalArgumentException("With VRRPv2 the advert interval must be whole seconds, 1 to 255 s (use"
          + " VRRPv3 for sub-second adverts): " + interval);
    }
  }

  /** Builds {@link GroupSettings}; every setter has a default except the interface. */
  public static final class Builder {
    private final String namespace;
    private final String name;
    private Optional<String> interfaceName = Optional.empty();
    private Optional<Ip> interfaceFromIp = Optional.empty();
    private boolean unicast;
    private Optional<String> password = Optional.empty();
    private SortedMap<String, String> verbatimConfig = new TreeMap<>();
    private int vrrpVersion = 3;
    private Duration advertInterval = DEFAULT_ADVERT_INTERVAL;
    private int priority = DEFAULT_PRIORITY;
    private int ownerPriority = DEFAULT_OWNER_PRIORITY;
    private boolean preempt = true;
    private Duration preemptDelay = Duration.ZERO;
    private int sharedInstances;
    private int maxAdvertisedVips = DEFAULT_MAX_ADVERTISED_VIPS;
    private String healthCheckCommand = DEFAULT_HEALTH_CHECK_COMMAND;

    private Builder(String namespace, String name) {
      this.namespace = namespace;
      this.name = name;
    }

    public Builder interfaceName(String value) {
      this.interfaceName = Optional.ofNullable(value);
      return this;
    }

    public Builder interfaceFromIp(Ip value) {
      this.interfaceFromIp = Optional.ofNullable(value);
      return this;
    }

    public Builder unicast(boolean value) {
      this.unicast = value;
      return this;
    }

    public Builder password(String value) {
      this.password = Optional.ofNullable(value);
      return this;
    }

    public Builder verbatimConfig(Map<String, String> value) {
      this.verbatimConfig = new TreeMap<>(value);
      return this;
    }

    public Builder vrrpVersion(int value) {
      this.vrrpVersion = value;
      return this;
    }

    public Builder advertInterval(Duration value) {
      this.advertInterval = value;
      return this;
    }

    /** keepalived's own defaults: VRRPv2, one advert per second. */
    public Builder keepalivedDefaultTiming() {
      return vrrpVersion(2).advertInterval(Duration.ofSeconds(1));
    }

    public Builder priority(int value) {
      this.priority = value;
      return this;
    }

    public Builder ownerPriority(int value) {
      this.ownerPriority = value;
      return this;
    }

    public Builder preempt(boolean value) {
      this.preempt = value;
      return this;
    }

    public Builder preemptDelay(Duration value) {
      this.preemptDelay = value;
      return this;
    }

    public Builder sharedInstances(int value) {
      this.sharedInstances = value;
      return this;
    }

    public Builder maxAdvertisedVips(int value) {
      this.maxAdvertisedVips = value;
      return this;
    }

    public Builder healthCheckCommand(String value) {
      this.healthCheckCommand = value;
      return this;
    }

    public GroupSettings build() {
      return new GroupSettings(namespace, name, interfaceName, interfaceFromIp, unicast, password,
          Collections.unmodifiableSortedMap(new TreeMap<>(verbatimConfig)), vrrpVersion, advertInterval, priority,
          ownerPriority, preempt, preemptDelay, sharedInstances, maxAdvertisedVips, healthCheckCommand);
    }
  }
}
