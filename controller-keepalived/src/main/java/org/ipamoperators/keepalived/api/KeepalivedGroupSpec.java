package org.ipamoperators.keepalived.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.List;
import java.util.Map;

/**
 * The fields of keepalived-operator's KeepalivedGroup, with the same names and meaning ({@code interface} becomes
 * optional when {@code interfaceFromIP} is set, {@code blacklistRouterIDs} is range-checked, {@code image}
 * defaults to the operator's setting), and the new VRRP settings. Admission checks the syntax; the controller
 * checks the rest (condition {@code Ready=False}, reason {@code InvalidSpec}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.interface) || has(self.interfaceFromIP)",
    message = "set interface or interfaceFromIP")
public record KeepalivedGroupSpec(
    @JsonPropertyDescription("keepalived image (with /usr/sbin/keepalived, and /usr/bin/curl for services with"
        + " externalTrafficPolicy Local); the operator's default when unset")
    @Size(max = 512) String image,

    @JsonProperty("interface")
    @JsonPropertyDescription("network interface of the VRRP instances on every node")
    @Pattern("^[A-Za-z0-9_.-]{1,15}$") String interfaceName,

    @JsonProperty("interfaceFromIP")
    @JsonPropertyDescription("each node uses the interface that routes to this address instead of 'interface'")
    @Size(max = 45) @Pattern("^([0-9]{1,3}[.]){3}[0-9]{1,3}$|^[0-9a-fA-F:]*:[0-9a-fA-F:.]*$") String interfaceFromIP,

    @JsonPropertyDescription("nodes running the group's keepalived")
    Map<String, String> nodeSelector,

    @JsonPropertyDescription("VRRP PASS authentication (VRRPv2, IPv4 only); the password is read from a Secret")
    PasswordAuth passwordAuth,

    @JsonPropertyDescription("key value lines for keepalived's global_defs")
    Map<String, String> verbatimConfig,

    @JsonProperty("blacklistRouterIDs")
    @JsonPropertyDescription("VRRP router ids never to use (used by other VRRP speakers on the network)")
    @Size(max = 255) List<@Min(1) @Max(255) Integer> blacklistRouterIDs,

    @JsonPropertyDescription("send adverts to the other nodes' addresses instead of the VRRP multicast group")
    Boolean unicastEnabled,

    @JsonPropertyDescription("priorityClassName of the keepalived pods")
    String daemonsetPodPriorityClassName,

    @JsonPropertyDescription("annotations of the keepalived pods")
    Map<String, String> daemonsetPodAnnotations,

    @JsonPropertyDescription("VRRP version of IPv4 instances: 3 (default, sub-second adverts) or 2; IPv6 always 3")
    @Min(2) @Max(3) Integer vrrpVersion,

    @JsonPropertyDescription("time between a master's adverts, e.g. 100ms (default) or 1s; a backup takes over after"
        + " about 3.6 intervals, and each instance's master sends 1/interval adverts per second")
    @Pattern("^[0-9]+([.][0-9]+)?(ms|s)$") String advertInterval,

    @JsonPropertyDescription("priority of the first backup of an instance (default 100); the next ones get 10 less")
    @Min(1) @Max(254) Integer priority,

    @JsonPropertyDescription("priority of an instance's preferred node (spread VIPs, shared instances; default 200)")
    @Min(2) @Max(254) Integer ownerPriority,

    @JsonPropertyDescription("whether a preferred node takes its VIPs back when it returns (default true)")
    Boolean preempt,

    @JsonPropertyDescription("delay of such a take-over after start-up, e.g. 30s")
    @Pattern("^[0-9]+([.][0-9]+)?(ms|s)$") String preemptDelay,

    @JsonPropertyDescription("0 (default): one VRRP instance and router id per service; N: the services share N"
        + " instances, for groups with more services than router ids")
    @Min(0) @Max(255) Integer sharedInstances,

    @JsonPropertyDescription("VIPs of an instance listed in its adverts (default 16); the rest are excluded from"
        + " the adverts but handled the same way")
    @Min(1) @Max(64) Integer maxAdvertisedVips,

    @JsonPropertyDescription("only Services in namespaces matching this selector may attach VIPs (default: all)")
    LabelSelector namespaceSelector,

    @JsonProperty("routerIDSpace")
    @JsonPropertyDescription("router-id space shared with the other groups on the same network (default 'default');"
        + " groups on networks that never see each other's adverts may use spaces of their own")
    @Pattern("^[a-z0-9]([-a-z0-9]{0,33}[a-z0-9])?$") String routerIDSpace,

    @JsonPropertyDescription("the only namespaces whose Services may attach VIPs to this group ('@group': the"
        + " group's own namespace), on top of namespaceSelector; unset: the operator's --keepalived-service-namespaces"
        + " (default: every namespace)")
    @Size(min = 1, max = 256) List<@Pattern("^(@group|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$") String> serviceNamespaces,

    @JsonProperty("vipCIDRs")
    @JsonPropertyDescription("the only addresses this group announces, IPv4 and IPv6 (CIDRs, addresses or first-last"
        + " ranges); a Service's VIP outside them is refused with a Warning Event; unset: the operator's"
        + " --keepalived-vip-cidrs (default: any address)")
    @Size(min = 1, max = 256) List<@Size(max = 100) String> vipCIDRs) {

  /** A spec without {@code serviceNamespaces} and {@code vipCIDRs}: the operator's defaults apply. */
  public KeepalivedGroupSpec(String image, String interfaceName, String interfaceFromIP, Map<String, String> nodeSelector,
      PasswordAuth passwordAuth, Map<String, String> verbatimConfig, List<Integer> blacklistRouterIDs,
      Boolean unicastEnabled, String daemonsetPodPriorityClassName, Map<String, String> daemonsetPodAnnotations,
      Integer vrrpVersion, String advertInterval, Integer priority, Integer ownerPriority, Boolean preempt,
      String preemptDelay, Integer sharedInstances, Integer maxAdvertisedVips, LabelSelector namespaceSelector,
      String routerIDSpace) {
    this(image, interfaceName, interfaceFromIP, nodeSelector, passwordAuth, verbatimConfig, blacklistRouterIDs,
        unicastEnabled, daemonsetPodPriorityClassName, daemonsetPodAnnotations, vrrpVersion, advertInterval, priority,
        ownerPriority, preempt, preemptDelay, sharedInstances, maxAdvertisedVips, namespaceSelector, routerIDSpace,
        null, null);
  }

  public static final String DEFAULT_ROUTER_ID_SPACE = "default";

  public String routerIdSpaceOrDefault() {
    return routerIDSpace == null || routerIDSpace.isBlank() ? DEFAULT_ROUTER_ID_SPACE : routerIDSpace;
  }

  public List<Integer> blacklistOrEmpty() {
    return blacklistRouterIDs == null ? List.of() : blacklistRouterIDs;
  }
}
