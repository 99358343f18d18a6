package org.example.fictional;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * The API of a fictional cloud, held in memory: instances in one subnet, each with a primary address
 * and room for a number of secondary addresses, each secondary address labelled with who assigned
 * it. Stands for the SDK client a real provider would use; clouds are found by name.
 */
public final class FictionalCloud {
  private static final Map<String, FictionalCloud> CLOUDS = new ConcurrentHashMap<>();

  /** An error of the cloud's API, with its code. */
  public static final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String code;

    ApiError(String code, String message) {
      super(message);
      this.code = code;
    }
  }

  record Instance(String id, Ip primary, int slots, Map<Ip, String> secondaries) {}

  private final IpRange subnet;
  private final Map<String, Instance> instances = new LinkedHashMap<>();
  private int next = 1;

  private FictionalCloud(IpRange subnet) {
    this.subnet = subnet;
  }

  /** A new cloud under a name, replacing any of that name. */
  public static FictionalCloud create(String name, String subnet) {
    FictionalCloud c = new FictionalCloud(IpRange.parse(subnet));
    CLOUDS.put(name, c);
    return c;
  }

  static Optional<FictionalCloud> named(String name) {
    return Optional.ofNullable(CLOUDS.get(name));
  }

  public IpRange subnet() {
    return subnet;
  }

  /** Starts an instance with room for {@code slots} secondary addresses; returns its id. */
  public synchronized String runInstance(Ip primary, int slots) {
    String id = "fc-" + next++;
    instances.put(id, new Instance(id, primary, slots, new TreeMap<>()));
    return id;
  }

  synchronized Instance instance(String id) {
    Instance i = instances.get(id);
    if (i == null) {
      throw new ApiError("InstanceNotFound", "no instance " + id);
    }
    return new Instance(i.id(), i.primary(), i.slots(), Map.copyOf(i.secondaries()));
  }

  /** Assigns an address to an instance on behalf of {@code by}, taking it off another if asked. */
  public synchronized void assign(String id, Ip ip, String by, boolean takeOver) {
    Instance i = instances.get(id);
    if (i == null) {
      throw new ApiError("InstanceNotFound", "no instance " + id);
    }
    if (!subnet.contains(ip)) {
      throw new ApiError("OutsideSubnet", ip + " is outside " + subnet);
    }
    Instance holder = holder(ip);
    if (holder != null && holder != i) {
      if (!takeOver) {
        throw new ApiError("AddressInUse", ip + " is held by " + holder.id());
      }
      holder.secondaries().remove(ip);
    }
    if (!i.secondaries().containsKey(ip) && i.secondaries().size() >= i.slots()) {
      throw new ApiError("SlotsExhausted", "instance " + id + " has no free slot for " + ip);
    }
    i.secondaries().put(ip, by);
  }

  synchronized void unassign(String id, Ip ip) {
    Instance i = instances.get(id);
    if (i == null) {
      throw new ApiError("InstanceNotFound", "no instance " + id);
    }
    i.secondaries().remove(ip);
  }

  synchronized Instance holder(Ip ip) {
    return instances.values().stream().filter(i -> i.primary().equals(ip) || i.secondaries().containsKey(ip))
        .findFirst().orElse(null);
  }

  /** Every address in use: the gateway (the subnet's first), primaries and secondaries. */
  synchronized Set<Ip> inUse() {
    Set<Ip> out = new java.util.TreeSet<>();
    out.add(subnet.first());
    instances.values().forEach(i -> {
      out.add(i.primary());
      out.addAll(i.secondaries().keySet());
    });
    return out;
  }
}
