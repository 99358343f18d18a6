package org.ipamoperators.cloud.aws;

import static org.ipamoperators.cloud.aws.Ec2NodeNetwork.OWNED_TAGS_PREFIX;
import static org.ipamoperators.cloud.aws.Ec2NodeNetwork.OWNED_TAG_PREFIX;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.Tag;

/**
 * The cloud-side ledger of the addresses this operator attached: ownership tags on each ENI, read in
 * either form (packed lists or one tag per address) and written packed (see {@link Ec2NodeNetwork}).
 */
final class EniOwnership {
  static final int TAG_VALUE_MAX = 256;
  // Logged under Ec2NodeNetwork: the class whose logger operators turn up.
  private static final Logger LOG = LoggerFactory.getLogger(Ec2NodeNetwork.class);

  private final Ec2Client ec2;
  private final Map<String, Object> eniLocks = new ConcurrentHashMap<>();

  EniOwnership(Ec2Client ec2) {
    this.ec2 = ec2;
  }

  /** The addresses the ownership tags list, in either form. */
  static Set<Ip> listed(List<Tag> tags) {
    Set<Ip> out = ConcurrentHashMap.newKeySet();
    for (Tag t : tags) {
      if (t.key() == null) {
        continue;
      }
      List<String> texts = t.key().startsWith(OWNED_TAGS_PREFIX) && t.value() != null
          ? List.of(t.value().trim().split(" +"))
          : t.key().startsWith(OWNED_TAG_PREFIX) ? List.of(t.key().substring(OWNED_TAG_PREFIX.length())) : List.of();
      for (String text : texts) {
        try {
          out.add(Ip.parse(text));
        } catch (RuntimeException e) {
          // not one of ours after all
        }
      }
    }
    return out;
  }

  private static Set<String> keys(List<Tag> tags) {
    Set<String> out = ConcurrentHashMap.newKeySet();
    tags.stream().map(Tag::key).filter(k -> k != null && (k.startsWith(OWNED_TAGS_PREFIX) || k.startsWith(OWNED_TAG_PREFIX)))
        .forEach(out::add);
    return out;
  }

  /** The ownership tags listing {@code owned}: sorted addresses packed into values of at most 256 characters. */
  static List<Tag> packed(Set<Ip> owned) {
    List<Tag> out = new ArrayList<>();
    StringBuilder value = new StringBuilder();
    for (Ip ip : new TreeSet<>(owned)) {
      String text = ip.toString();
      if (value.length() > 0 && value.length() + 1 + text.length() > TAG_VALUE_MAX) {
        out.add(Tag.builder().key(OWNED_TAGS_PREFIX + out.size()).value(value.toString()).build());
        value.setLength(0);
      }
      if (value.length() > 0) {
        value.append(' ');
      }
      value.append(text);
    }
    if (value.length() > 0) {
      out.add(Tag.builder().key(OWNED_TAGS_PREFIX + out.size()).value(value.toString()).build());
    }
    return out;
  }

  /** Lists {@code ips} in the ENI's ownership tags (before they are assigned). */
  void own(NodeEni eni, List<Ip> ips) {
    change(eni, ips, true);
  }

  void disownQuietly(NodeEni eni, List<Ip> ips) {
    try {
      change(eni, ips, false);
    } catch (Ec2CallFailed f) {
      // A listed address that is not there grants nothing; it is rewritten or ignored later.
      LOG.info("could not remove {} from the ownership tags of {}: {} ({})", ips, eni.eniId(), f.getMessage(), f.code);
    }
  }

  /**
   * Read, change, write of the ENI's ownership list, one ENI at a time in this process, from the
   * tags as EC2 has them now (IPAMs reconciled in parallel may have written since this view was
   * described): one DescribeNetworkInterfaces, one CreateTags with the packed tags (it overwrites
   * their values), one DeleteTags for keys not in use (surplus packed tags, tags of the
   * one-per-address form).
   */
  private void change(NodeEni eni, List<Ip> ips, boolean add) {
    synchronized (eniLocks.computeIfAbsent(eni.eniId(), k -> new Object())) {
      List<Tag> current = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(eni.eniId()))).networkInterfaces().stream()
          .findFirst().map(NetworkInterface::tagSet).orElse(List.of());
      Set<Ip> owned = new TreeSet<>(listed(current));
      if (add) {
        owned.addAll(ips);
      } else {
        owned.removeAll(ips);
      }
      List<Tag> tags = packed(owned);
      Set<String> keys = tags.stream().map(Tag::key).collect(Collectors.toSet());
      List<String> stale = keys(current).stream().filter(k -> !keys.contains(k)).sorted().toList();
      if (!tags.isEmpty()) {
        Ec2CallFailed.call("CreateTags", () -> ec2.createTags(r -> r.resources(eni.eniId()).tags(tags)));
      }
      if (!stale.isEmpty()) {
        Ec2CallFailed.call("DeleteTags", () -> ec2.deleteTags(r -> r.resources(eni.eniId())
            .tags(stale.stream().map(k -> Tag.builder().key(k).build()).toList())));
      }
      eni.tagged().retainAll(owned);
      eni.tagged().addAll(owned);
    }
  }
}
