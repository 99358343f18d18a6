package org.ipamoperators.cloud.azure;

import com.azure.core.util.Context;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One NIC: its removals and additions in one PUT, retried on conflicts; fills the result of every
 * change it was given.
 */
final class NicUpdate {
  private static final Logger LOG = LoggerFactory.getLogger(AzureNodeNetwork.class);

  private final ArmAccess arm;
  private final LoadBalancerPools loadBalancerPools;
  private final VnetReads vnets;
  private final ApplyPass pass;
  private final NicState s;
  private final Map<Ip, Integer> adds;
  private final Map<Ip, Integer> removes;
  private final Set<Ip> dropped = new TreeSet<>();
  private final Set<Ip> present = new HashSet<>(); // on the NIC as read for the last PUT

  NicUpdate(ArmAccess arm, LoadBalancerPools loadBalancerPools, VnetReads vnets, ApplyPass pass, NicState s,
      Map<Ip, Integer> adds, Map<Ip, Integer> removes) {
    this.arm = arm;
    this.loadBalancerPools = loadBalancerPools;
    this.vnets = vnets;
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
    NicChanges wanted = new NicChanges(pass.changes, removes, adds, s.where(), arm.settings().ipConfigurationsPerNic());
    Duration delay = arm.settings().baseDelay();
    ArmCallFailed last = null;
    for (int attempt = 1; attempt <= arm.settings().maxAttempts(); attempt++) {
      Optional<ArmCallFailed> failure = attempt(wanted, attempt == 1);
      if (failure.isEmpty()) {
        return;
      }
      last = failure.get();
      if (retryAtOnce(last)) {
        continue;
      }
      if (!last.retryable || attempt == arm.settings().maxAttempts()) {
        break;
      }
      sleep(delay);
      Duration maxDelay = arm.settings().maxDelay();
      delay = delay.multipliedBy(2).compareTo(maxDelay) > 0 ? maxDelay : delay.multipliedBy(2);
    }
    if (last != null) {
      failRemaining(last);
    }
  }

  /** Nothing can be written on a Uniform scale set's NIC: what is not already as wanted fails alone. */
  private void refuseOnScaleSetNic() {
    Set<Ip> onNic = new HashSet<>();
    NicReads.configs(s.body).forEach(c -> NicEdit.address(c).ifPresent(onNic::add));
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
    synchronized (arm.state().nicLock(s.nic.id())) {
      try {
        if (!first || wanted.wouldChange(NicReads.configs(s.body), pools(s.body))) {
          s.body = arm.getNic(s.nic);
        }
        NetworkInterfaceInner nic = s.body;
        List<NetworkInterfaceIpConfigurationInner> cfgs = new ArrayList<>(NicReads.configs(nic));
        NicChanges.Decision d = wanted.decide(cfgs, pass.results, dropped);
        present.clear();
        present.addAll(d.onNic());
        d.results().forEach((i, r) -> pass.results[i] = r);
        d.alreadyGone().forEach(ip -> pass.released.putIfAbsent(ip, arm.state().clock.instant()));
        NicEdit.Plan plan = NicEdit.plan(cfgs, d.remove(), d.add(), s.subnetId, pools(nic), true);
        if (plan.changed()) {
          NetworkInterfaceInner body = nic.withIpConfigurations(plan.configs());
          Context ctx = PutIfMatchPolicy.context(nic.etag());
          s.body = arm.call("PutNetworkInterface", () -> arm.clients().network().getNetworkInterfaces()
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
    return loadBalancerPools.wanted(nic);
  }

  /** After the PUT (or none needed): every change in it is applied; a move's time on no NIC is measured. */
  private void recordApplied(NicChanges.Decision d, boolean put) {
    Instant done = arm.state().clock.instant();
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
        arm.state().metrics.moveGap(gap);
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
      return loadBalancerPools.learnOutboundPools(s);
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
      taken = vnets.takenAddresses(s.subnetId, candidates);
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

  private static AddressChangeResult scaleSetRefusal(AddressChange c, NicState s) {
    return AddressChangeResult.failed(c, "ScaleSetNicNotWritable", s.where() + " belongs to an instance of a Uniform "
        + "scale set: its ipConfigurations come from the scale set's model and no NIC PUT can change them", false);
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
      synchronized (arm.state().nicLock(nicId.get().id())) {
        NetworkInterfaceInner nic = arm.getNic(nicId.get());
        NicEdit.Plan plan = NicEdit.plan(NicReads.configs(nic), Set.of(ip), Set.of(), null, List.of(), false);
        if (plan.changed()) {
          nic.withIpConfigurations(plan.configs());
          Context ctx = PutIfMatchPolicy.context(nic.etag());
          NetworkInterfaceInner after = arm.call("PutNetworkInterface", () -> arm.clients().network()
              .getNetworkInterfaces().createOrUpdate(nicId.get().resourceGroup(), nicId.get().name(), nic, ctx));
          arm.state().nodes.values().stream().filter(n -> AzureIds.same(n.nic.id(), nicId.get().id()))
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
}
