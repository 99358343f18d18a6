package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.network.fluent.models.BackendAddressPoolInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import com.azure.resourcemanager.network.fluent.models.SubnetInner;
import com.azure.resourcemanager.network.models.IpAllocationMethod;
import com.azure.resourcemanager.network.models.IpVersion;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;

/**
 * The pure part of a NIC update: from the ipConfigurations Azure returned, the ones to PUT back so
 * that this operator's addresses are exactly as wanted. Configurations this operator did not
 * create (the primary, other tools') are passed through as the same objects, untouched.
 *
 * <p>Ownership is the configuration's name: {@value #OWNED_PREFIX} and the address ({@code .}
 * kept, {@code :} as {@code -}), written in the same PUT as the address, so no crash can leave an
 * address without its record. The old operator's {@code EgressIP<address>} configurations are
 * taken over as they are (no rename, no call).
 */
final class NicEdit {
  static final String OWNED_PREFIX = "ipam-egress-";
  static final String OLD_OPERATOR_PREFIX = "EgressIP";

  private NicEdit() {}

  static String ownedName(Ip ip) {
    return OWNED_PREFIX + ip.toString().replace(':', '-');
  }

  static Optional<Ip> address(NetworkInterfaceIpConfigurationInner c) {
    try {
      return c.privateIpAddress() == null ? Optional.empty() : Optional.of(Ip.parse(c.privateIpAddress()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  static boolean isPrimary(NetworkInterfaceIpConfigurationInner c, int count) {
    return Boolean.TRUE.equals(c.primary()) || count == 1;
  }

  /** Created by this operator, or by the old one, for the address it holds. */
  static boolean owned(NetworkInterfaceIpConfigurationInner c) {
    Optional<Ip> ip = address(c);
    if (ip.isEmpty() || c.name() == null || Boolean.TRUE.equals(c.primary())) {
      return false;
    }
    return c.name().equalsIgnoreCase(ownedName(ip.get())) || c.name().equals(OLD_OPERATOR_PREFIX + ip.get());
  }

  /** Whether a configuration name is one this operator (or the old one) gives an address. */
  static boolean ownedName(String name, Ip ip) {
    return name != null && (name.equalsIgnoreCase(ownedName(ip)) || name.equals(OLD_OPERATOR_PREFIX + ip));
  }

  /** The pools a new (or kept) egress configuration should be in. */
  static List<String> wantedPools(NetworkInterfaceIpConfigurationInner primary, LoadBalancerPolicy policy,
      Collection<String> outboundPools) {
    if (policy == LoadBalancerPolicy.NONE || primary == null || primary.loadBalancerBackendAddressPools() == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (BackendAddressPoolInner p : primary.loadBalancerBackendAddressPools()) {
      if (p.id() != null && outboundPools.stream().noneMatch(o -> o.equalsIgnoreCase(p.id()))) {
        out.add(p.id());
      }
    }
    return out;
  }

  static Set<String> poolIds(NetworkInterfaceIpConfigurationInner c) {
    Set<String> out = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    if (c.loadBalancerBackendAddressPools() != null) {
      c.loadBalancerBackendAddressPools().stream().map(BackendAddressPoolInner::id).filter(x -> x != null)
          .forEach(out::add);
    }
    return out;
  }

  /** A new static configuration of this operator. */
  static NetworkInterfaceIpConfigurationInner egressConfig(Ip ip, String subnetId, List<String> pools) {
    NetworkInterfaceIpConfigurationInner c = new NetworkInterfaceIpConfigurationInner().withName(ownedName(ip))
        .withPrivateIpAddress(ip.toString()).withPrivateIpAllocationMethod(IpAllocationMethod.STATIC)
        .withPrivateIpAddressVersion(ip.isIPv4() ? IpVersion.IPV4 : IpVersion.IPV6).withPrimary(false)
        .withSubnet(new SubnetInner().withId(subnetId));
    c.withLoadBalancerBackendAddressPools(pools.stream().map(id -> new BackendAddressPoolInner().withId(id)).toList());
    return c;
  }

  /** What to PUT, or empty when the NIC is already as wanted. */
  record Plan(List<NetworkInterfaceIpConfigurationInner> configs, boolean changed) {}

  /**
   * The configurations to PUT: every current one except this operator's for {@code remove}, plus
   * one for each of {@code add} not there yet; this operator's configurations of {@code add} get
   * {@code pools} when {@code syncPools} (so a policy change reaches the existing ones; the old
   * operator's configurations keep theirs). Foreign configurations holding an address of {@code add} are the
   * caller's business (checked before).
   */
  static Plan plan(List<NetworkInterfaceIpConfigurationInner> current, Set<Ip> remove, Set<Ip> add, String subnetId,
      List<String> pools, boolean syncPools) {
    List<NetworkInterfaceIpConfigurationInner> out = new ArrayList<>();
    boolean changed = false;
    Set<Ip> present = new TreeSet<>();
    Set<String> wantPools = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    wantPools.addAll(pools);
    for (NetworkInterfaceIpConfigurationInner c : current) {
      Optional<Ip> ip = address(c);
      if (owned(c) && ip.isPresent()) {
        if (remove.contains(ip.get()) && !add.contains(ip.get())) {
          changed = true;
          continue;
        }
        present.add(ip.get());
        // this operator's configurations of this call's addresses follow the policy (another
        // EgressIPAM's, on the same NIC, follow its own); the old operator's keep the pools it gave them
        if (syncPools && add.contains(ip.get()) && c.name().equalsIgnoreCase(ownedName(ip.get()))
            && !poolIds(c).equals(wantPools)) {
          c.withLoadBalancerBackendAddressPools(pools.stream().map(id -> new BackendAddressPoolInner().withId(id))
              .toList());
          changed = true;
        }
      } else if (ip.isPresent()) {
        present.add(ip.get());
      }
      out.add(c);
    }
    for (Ip ip : add) {
      if (!present.contains(ip)) {
        out.add(egressConfig(ip, subnetId, pools));
        changed = true;
      }
    }
    return new Plan(out, changed);
  }

  static String lower(String s) {
    return s == null ? null : s.toLowerCase(Locale.ROOT);
  }
}
