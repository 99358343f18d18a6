package org.ipamoperators.eip;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.cloud.aws.eip.ElasticIpException;
import org.ipamoperators.cloud.aws.eip.ElasticIps;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.eip.api.EipStatus;
import org.ipamoperators.eip.plan.AddressChoice;
import org.ipamoperators.eip.plan.EipTags;
import org.ipamoperators.eip.plan.PodClaimant;
import org.ipamoperators.eip.plan.PodDecision;
import org.ipamoperators.eip.plan.PodView;
import org.ipamoperators.eip.plan.SpecCheck;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an Eip: finds its address by the UID tag (so a restart between AllocateAddress and the status write
 * never allocates twice), repairs duplicates, allocates (or adopts) one when there is none, then associates it
 * with its pod's IP or with the node the node-mode assignment gives it, and records all of it in the status, the
 * pod's annotations and the nodes' ready-status labels. Decisions are pure ({@code plan}); this class fetches and
 * persists. Every AWS failure is a condition and an Event on this Eip only. Every Eip is checked against AWS at
 * least every resync interval, which repairs changes made outside (a disassociation in the console).
 */
@ControllerConfiguration(name = "eips", finalizerName = EipNames.EIP_FINALIZER)
public class EipReconciler implements Reconciler<Eip>, Cleaner<Eip> {
  static final String CONTROLLER = "eip";
  static final String COND_READY = "Ready";
  static final String COND_CONFLICT = "Conflict";
  static final String COND_QUOTA = "QuotaExceeded";
  private static final Logger LOG = LoggerFactory.getLogger(EipReconciler.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration RETRY_AWS = Duration.ofSeconds(30);
  private static final Duration RETRY_QUOTA = Duration.ofMinutes(2);
  /** {@link #address}: the Eip reconciled is a stale copy of one deleted or replaced; nothing is done. */
  private static final ElasticIp GONE = new ElasticIp("gone", "0.0.0.0", null, null, null, null, null, Map.of());

  private final KubernetesClient client;
  private final EipSettings settings;
  private final ElasticIps ec2;
  private final EventRecorder events;
  private final EipMetrics metrics;
  private final ClusterLedger ledger;
  private final Clock clock;
  /** AWS changes to one address are serialised; different addresses proceed at once. */
  private final KeyedLocks addressLocks = new KeyedLocks(64);
  private final NodeMode nodeMode;
  private final AddressSnapshot addresses;
  private final Set<String> claimed = ConcurrentHashMap.newKeySet();

  private InformerEventSource<Pod, Eip> pods;

  public EipReconciler(KubernetesClient client, EipSettings settings, ElasticIps ec2,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this(client, settings, ec2, new EipMetrics(registry), Clock.systemUTC());
  }

  EipReconciler(KubernetesClient client, EipSettings settings, ElasticIps ec2, EipMetrics metrics, Clock clock) {
    this.client = client;
    this.settings = settings;
    this.ec2 = ec2;
    this.events = new EventRecorder(client, "eip-controller");
    this.metrics = metrics;
    this.ledger = new ClusterLedger(client);
    this.clock = clock;
    this.addresses = new AddressSnapshot(ec2, snapshotScope(settings), snapshotAge(settings.resyncInterval()), clock);
    this.nodeMode = new NodeMode(client, settings, ec2, events, clock, addressLocks, this::detach);
  }

  /** Our cluster's addresses, of the namespace served when scoped. */
  private static Map<String, String> snapshotScope(EipSettings settings) {
    return settings.namespace() == null ? Map.of(EipNames.TAG_CLUSTER, settings.clusterName())
        : Map.of(EipNames.TAG_CLUSTER, settings.clusterName(), EipNames.TAG_NAMESPACE, settings.namespace());
  }

  /** A quarter of the resync interval, at most 30 s: how much later than before a change outside is seen. */
  static Duration snapshotAge(Duration resync) {
    Duration quarter = resync.dividedBy(4);
    return quarter.compareTo(Duration.ofSeconds(30)) < 0 ? quarter : Duration.ofSeconds(30);
  }

  EipMetrics metrics() {
    return metrics;
  }

  @Override
  public List<EventSource<?, Eip>> prepareEventSources(EventSourceContext<Eip> context) {
    var podConfig = InformerEventSourceConfiguration.from(Pod.class, Eip.class)
        .withLabelSelector(EipNames.MANAGE_LABEL)
        .withOnUpdateFilter(EipReconciler::podChanged)
        .withSecondaryToPrimaryMapper(p -> eipsOfPod(context, p));
    if (settings.namespace() != null) {
      podConfig.withNamespaces(Set.of(settings.namespace()));
    }
    pods = new InformerEventSource<>(podConfig.build(), context);
    InformerEventSource<Node, Eip> nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, Eip.class)
        .withLabelSelector(EipNames.MANAGE_LABEL)
        .withOnUpdateFilter(EipReconciler::nodeChanged)
        .withSecondaryToPrimaryMapper(n -> context.getPrimaryCache().list(e -> nodeSelector(e) != null)
            .map(ResourceID::fromResource).collect(Collectors.toSet())).build(), context);
    nodeMode.nodes(nodes);
    return List.of(pods, nodes);
  }

  private static Set<ResourceID> eipsOfPod(EventSourceContext<Eip> context, Pod p) {
    String ns = p.getMetadata().getNamespace();
    String name = p.getMetadata().getName();
    return context.getPrimaryCache().list(ns, e -> name.equals(podName(e))
        || (e.getStatus() != null && name.equals(e.getStatus().resourceId()) && podName(e) != null))
        .map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private static boolean podChanged(Pod n, Pod o) {
    return !Objects.equals(n.getStatus() == null ? null : n.getStatus().getPodIP(),
        o.getStatus() == null ? null : o.getStatus().getPodIP())
        || !Objects.equals(n.getSpec().getNodeName(), o.getSpec().getNodeName())
        || !Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp())
        || !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels())
        || !Objects.equals(annotation(n, EipNames.POD_ENI_ANNOTATION), annotation(o, EipNames.POD_ENI_ANNOTATION))
        || !Objects.equals(n.getMetadata().getUid(), o.getMetadata().getUid());
  }

  private static boolean nodeChanged(Node n, Node o) {
    Map<String, String> nl = new HashMap<>(labels(n));
    Map<String, String> ol = new HashMap<>(labels(o));
    nl.remove(EipNames.READY_STATUS_LABEL);
    ol.remove(EipNames.READY_STATUS_LABEL);
    return !nl.equals(ol) || ready(n) != ready(o)
        || !Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp())
        || !Objects.equals(n.getSpec().getProviderID(), o.getSpec().getProviderID())
        || !Objects.equals(internalIp(n), internalIp(o));
  }

  // --- reconcile ---------------------------------------------------------------------------------

  @Override
  public UpdateControl<Eip> reconcile(Eip eip, Context<Eip> context) {
    EipSpec spec = eip.getSpec();
    Optional<String> invalid = SpecCheck.problem(spec);
    if (invalid.isPresent()) {
      // Before the v1 upgrade: an empty v1 podName moved into the selector would be refused on every pass.
      StatusDraft status = new StatusDraft(eip);
      events.warning(eip, "InvalidSpec", invalid.get());
      status.condition(COND_READY, false, "InvalidSpec", invalid.get());
      return finish(eip, status, null);
    }
    if (spec.selector() == null && spec.podName() != null) {
      upgradeV1(eip);
      return UpdateControl.noUpdate();
    }
    EipSelector selector = spec.effectiveSelector();
    StatusDraft status = new StatusDraft(eip);
    try {
      ElasticIp address = address(eip, selector, status);
      if (address == GONE) {
        return UpdateControl.noUpdate();
      }
      if (address == null) {
        return finish(eip, status, RETRY_QUOTA.compareTo(settings.resyncInterval()) < 0 ? RETRY_QUOTA
            : settings.resyncInterval());
      }
      Duration again = selector.pod() != null ? podMode(eip, selector.pod().podName(), address, status, context)
          : nodeMode.reconcile(eip, address, status, context);
      return finish(eip, status, again);
    } catch (ElasticIpException e) {
      LOG.info("Eip {}: {}", eip.key(), e.getMessage());
      events.warning(eip, "AwsError", e.getMessage());
      status.condition(COND_READY, false, "AwsError", e.getMessage());
      return finish(eip, status, RETRY_AWS);
    } finally {
      if (status.awsChanged) {
        addresses.changed(eip.getMetadata().getUid()); // after the change: the next snapshot shows it
      }
    }
  }

  /** v1's podName into v2's selector, in place: the status (a subresource) is untouched. */
  private void upgradeV1(Eip eip) {
    Map<String, Object> pod = Map.of("podName", eip.getSpec().podName());
    Map<String, Object> specPatch = new LinkedHashMap<>();
    specPatch.put("podName", null);
    specPatch.put("selector", Map.of("pod", pod));
    client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace()).withName(eip.getMetadata().getName())
        .patch(PatchContext.of(PatchType.JSON_MERGE), json(Map.of("spec", specPatch)));
    LOG.info("Eip {}: v1 spec.podName moved into spec.selector.pod.podName", eip.key());
    events.normal(eip, "UpgradedFromV1", "spec.podName " + eip.getSpec().podName()
        + " moved into spec.selector.pod.podName");
  }

  /**
   * The Eip's one address: found by UID tag (duplicates released), else adopted or allocated and recorded in the
   * status at once. Null when none could be had (quota): the status says why. {@link #GONE} when the Eip is a
   * stale copy of one deleted or replaced ({@link #stillThere}).
   */
  private ElasticIp address(Eip eip, EipSelector selector, StatusDraft status) {
    AddressChoice choice = AddressChoice.of(ownAddresses(eip, selector, status),
        eip.getStatus() == null ? null : eip.getStatus().allocationId());
    for (ElasticIp duplicate : choice.release()) {
      status.awsChanged = true;
      if (duplicate.associated()) {
        ec2.disassociate(duplicate.associationId());
      }
      ec2.release(duplicate.allocationId());
      events.warning(eip, "DuplicateAddressReleased", "released " + duplicate.publicIp() + " ("
          + duplicate.allocationId() + "), a second address tagged with this Eip's UID; kept "
          + choice.keep().orElseThrow().publicIp());
    }
    ElasticIp address;
    if (choice.keep().isPresent()) {
      address = choice.keep().get();
    } else {
      if (!stillThere(eip)) {
        return GONE;
      }
      address = adoptOrAllocate(eip, selector, status);
      if (address == null) {
        return null;
      }
      // Recorded before anything else: the UID tag finds it again anyway, the status tells users at once.
      status.allocationId = address.allocationId();
      status.publicIp = address.publicIp();
      patchStatus(eip, Map.of("allocationId", address.allocationId(), "publicIpAddress", address.publicIp()));
    }
    status.condition(COND_QUOTA, false, "Allocated", "the Eip has an address");
    status.allocationId = address.allocationId();
    status.publicIp = address.publicIp();
    claimInLedger(eip, address);
    return address;
  }

  /**
   * The addresses tagged with this Eip's UID, and the one its status names when the tag lookup misses it (EC2's
   * tag index lags behind, or the tags were removed): found by its allocation id and, unless it carries another
   * Eip's UID, taken back; with {@code selector} given, tagged again. Without this a missed lookup would allocate a
   * second address, move the workload to a new public IP and leave the first one untagged, beyond the sweep.
   */
  private List<ElasticIp> ownAddresses(Eip eip, EipSelector selector, StatusDraft status) {
    String uid = eip.getMetadata().getUid();
    // A deletion (no status draft) asks EC2 directly; reconciles share the snapshot.
    List<ElasticIp> tagged = status == null ? ec2.withTags(Map.of(EipNames.TAG_UID, uid))
        : addresses.tagged(uid);
    String recorded = eip.getStatus() == null ? null : eip.getStatus().allocationId();
    if (recorded == null || tagged.stream().anyMatch(a -> a.allocationId().equals(recorded))) {
      return tagged;
    }
    Optional<ElasticIp> found = ec2.byAllocationId(recorded);
    String foundUid = found.map(a -> a.tag(EipNames.TAG_UID)).orElse(null);
    if (found.isEmpty() || (foundUid != null && !foundUid.equals(uid))) {
      return tagged; // released meanwhile, or another Eip's
    }
    ElasticIp a = found.get();
    if (status != null) {
      Map<String, String> ours = tags(eip, selector);
      status.awsChanged = true;
      ec2.tag(a.allocationId(), ours);
      Map<String, String> tags = new LinkedHashMap<>(a.tags());
      tags.putAll(ours);
      a = new ElasticIp(a.allocationId(), a.publicIp(), a.associationId(), a.networkInterfaceId(), a.privateIp(),
          a.instanceId(), a.publicIpv4Pool(), tags);
      LOG.info("Eip {}: {} ({}) found by the allocation id in its status, not by its tags: tagged again",
          eip.key(), a.publicIp(), a.allocationId());
      events.normal(eip, "AddressRetagged", a.publicIp() + " (" + a.allocationId() + ") was found by the"
          + " allocation id in the status but not by its tags: tagged again");
    }
    List<ElasticIp> all = new ArrayList<>(tagged);
    all.add(a);
    return all;
  }

  private Map<String, String> tags(Eip eip, EipSelector selector) {
    return EipTags.of(settings.clusterName(), eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
        eip.getMetadata().getUid(), selector, settings.defaultTags());
  }

  /**
   * Whether this Eip, as the apiserver has it now, is the one being reconciled: not deleted, not deleting, not
   * replaced by another of its name. A replica whose watches went quiet reconciles what it last heard; allocating
   * for a copy that is gone would leak an address tagged with a dead UID, and its status write (by name) would
   * give that address to the Eip made again under the name, which then changes once that Eip is served. Asked only
   * before an address is allocated or adopted, so it costs one read per new address.
   */
  private boolean stillThere(Eip eip) {
    Eip live = client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace())
        .withName(eip.getMetadata().getName()).get();
    if (live != null && eip.getMetadata().getUid().equals(live.getMetadata().getUid())
        && live.getMetadata().getDeletionTimestamp() == null) {
      return true;
    }
    LOG.info("Eip {} (uid {}) is {} in the apiserver: no address allocated for this stale copy", eip.key(),
        eip.getMetadata().getUid(), live == null ? "gone" : live.getMetadata().getDeletionTimestamp() != null
            ? "being deleted" : "replaced (uid " + live.getMetadata().getUid() + ")");
    return false;
  }

  private ElasticIp adoptOrAllocate(Eip eip, EipSelector selector, StatusDraft status) {
    Map<String, String> tags = tags(eip, selector);
    var allocation = eip.getSpec().allocation();
    if (allocation != null && allocation.adoptTags() != null && !allocation.adoptTags().isEmpty()) {
      for (ElasticIp candidate : ec2.withTags(allocation.adoptTags())) {
        if (candidate.tag(EipNames.TAG_UID) != null || candidate.associated()) {
          continue; // another Eip's, or in use
        }
        if (!ledger.claim(Ip.parse(candidate.publicIp()), pool(), owner(eip)).ours()) {
          continue;
        }
        status.awsChanged = true;
        ec2.tag(candidate.allocationId(), tags);
        claimed.add(candidate.allocationId());
        events.normal(eip, "AddressAdopted", "adopted " + candidate.publicIp() + " (" + candidate.allocationId()
            + "), chosen by tags " + allocation.adoptTags());
        return candidate;
      }
      status.condition(COND_READY, false, "NoAddressToAdopt", "no unassociated address without an Eip carries"
          + " the tags " + allocation.adoptTags());
      return null;
    }
    try {
      Map<String, String> withTime = new LinkedHashMap<>(tags);
      withTime.put(EipNames.TAG_ALLOCATED_AT, clock.instant().truncatedTo(ChronoUnit.SECONDS).toString());
      status.awsChanged = true;
      ElasticIp a = ec2.allocate(withTime, allocation == null ? null : allocation.publicIpv4Pool());
      events.normal(eip, "AddressAllocated", "allocated " + a.publicIp() + " (" + a.allocationId() + ")");
      return a;
    } catch (ElasticIpException e) {
      metrics.allocateFailed(e.code());
      if (!ElasticIpException.ADDRESS_LIMIT_EXCEEDED.equals(e.code())) {
        throw e;
      }
      String usage = quotaUsage();
      String message = "the region's Elastic IP quota is used up" + usage + ": raise the quota (EC2-VPC Elastic"
          + " IPs, L-0263D0A3) or release addresses";
      events.warning(eip, "QuotaExceeded", message);
      status.condition(COND_QUOTA, true, "AddressLimitExceeded", message);
      status.condition(COND_READY, false, "QuotaExceeded", message);
      return null;
    }
  }

  private String quotaUsage() {
    try {
      int used = ec2.count();
      var quota = ec2.quota();
      if (quota.isPresent()) {
        metrics.quota(quota.getAsInt(), used);
        return " (" + used + " of " + quota.getAsInt() + " addresses, quota from " + ec2.quotaSource() + ")";
      }
      return " (" + used + " addresses)";
    } catch (ElasticIpException e) {
      return "";
    }
  }

  private void claimInLedger(Eip eip, ElasticIp address) {
    if (claimed.contains(address.allocationId())) {
      return;
    }
    ClaimResult r = ledger.claim(Ip.parse(address.publicIp()), pool(), owner(eip));
    if (r.ours()) {
      claimed.add(address.allocationId());
    } else {
      events.warning(eip, "AddressClaimedElsewhere", address.publicIp() + " is claimed by "
          + r.holder().describe() + " in the cluster's ledger");
    }
  }

  private String pool() {
    return "eip/" + settings.clusterName();
  }

  static ClaimOwner owner(Eip eip) {
    return new ClaimOwner(CONTROLLER, "Eip", eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
        eip.getMetadata().getUid());
  }

  // --- pod mode ----------------------------------------------------------------------------------

  private Duration podMode(Eip eip, String podName, ElasticIp address, StatusDraft status, Context<Eip> context) {
    String ns = eip.getMetadata().getNamespace();
    // Several Eips for one pod: one wins, the others hold nothing.
    List<Eip> rivals = context.getPrimaryCache().list(ns, e -> !e.getMetadata().getUid().equals(eip.getMetadata().getUid())
        && e.getMetadata().getDeletionTimestamp() == null && podName.equals(podName(e))).toList();
    if (!rivals.isEmpty()) {
      List<PodClaimant> claimants = new ArrayList<>();
      claimants.add(claimant(eip, podName));
      rivals.forEach(r -> claimants.add(claimant(r, podName)));
      String winner = PodClaimant.winner(claimants).orElseThrow().name();
      if (!winner.equals(eip.getMetadata().getName())) {
        String message = "Eip " + winner + " also selects pod " + podName + " and wins (a manual Eip before an"
            + " autocreated one, then the oldest): this one holds nothing";
        events.warning(eip, "Conflict", message);
        status.condition(COND_CONFLICT, true, "PodSelectedByAnotherEip", message);
        detach(eip, address, status, "Conflict", message);
        return settings.resyncInterval();
      }
    }
    status.condition(COND_CONFLICT, false, "NoConflict", "no other Eip selects pod " + podName);
    Optional<Pod> pod = pods.get(new ResourceID(podName, ns));
    PodDecision decision = PodDecision.of(podName, pod.map(EipReconciler::view));
    if (decision instanceof PodDecision.Detach d) {
      detach(eip, address, status, d.reason(), d.message());
      if (pod.isPresent() && pod.get().getMetadata().getDeletionTimestamp() != null) {
        podTerminating(eip, pod.get());
      }
      return settings.resyncInterval();
    }
    PodDecision.Associate a = (PodDecision.Associate) decision;
    Pod p = pod.orElseThrow();
    String eni;
    if (address.associatedTo(null, a.podIp())) {
      eni = address.networkInterfaceId();
    } else {
      Optional<String> found = podEni(eip, p, a, status);
      if (found.isEmpty()) {
        detach(eip, address, status, status.readyReason, status.readyMessage);
        return settings.resyncInterval();
      }
      eni = found.get();
      if (address.associated()) {
        LOG.info("Eip {}: {} moves from {} to pod {} ({})", eip.key(), address.publicIp(), address.privateIp(),
            podName, a.podIp());
      }
      status.awsChanged = true;
      String association = ec2.associate(address.allocationId(), eni, a.podIp());
      address = new ElasticIp(address.allocationId(), address.publicIp(), association, eni, a.podIp(), null,
          address.publicIpv4Pool(), address.tags());
      events.normal(eip, "Associated", address.publicIp() + " associated with pod " + podName + " (" + a.podIp()
          + " on " + eni + ")");
    }
    unannotatePrevious(eip, podName);
    annotate(p, address);
    status.attached(eni, a.podIp(), podName, address.associationId());
    status.condition(COND_READY, true, "Associated", address.publicIp() + " is associated with pod " + podName);
    return settings.resyncInterval();
  }

  private static PodClaimant claimant(Eip e, String podName) {
    String created = e.getMetadata().getCreationTimestamp();
    return new PodClaimant(e.getMetadata().getName(), autocreated(e, podName),
        created == null ? null : Instant.parse(created));
  }

  /** Ours carry a label; the old operator's are named after their pod. */
  static boolean autocreated(Eip e, String podName) {
    return "true".equals(labels(e).get(EipNames.AUTOCREATED_LABEL)) || e.getMetadata().getName().equals(podName);
  }

  /** The pod's ENI: its branch ENI (security groups for pods), else the instance's interface holding its IP. */
  private Optional<String> podEni(Eip eip, Pod pod, PodDecision.Associate a, StatusDraft status) {
    String branch = annotation(pod, EipNames.POD_ENI_ANNOTATION);
    if (branch != null) {
      Optional<String> eni = branchEni(branch);
      if (eni.isPresent()) {
        return eni;
      }
      events.warning(pod, "PodEniAnnotationInvalid", "annotation " + EipNames.POD_ENI_ANNOTATION + " is not a JSON"
          + " list with an eniId: the ENI is looked up on the instance instead");
    }
    Node node;
    try {
      node = client.nodes().withName(a.nodeName()).get();
    } catch (KubernetesClientException e) {
      throw e;
    }
    String providerId = node == null ? null : node.getSpec().getProviderID();
    Optional<String> instance = ElasticIps.instanceId(providerId);
    if (instance.isEmpty()) {
      String message = "cannot resolve instance: node " + a.nodeName() + " has no AWS provider id ("
          + (providerId == null ? "none" : providerId) + "); Fargate and non-AWS nodes cannot hold an Elastic IP";
      events.warning(pod, "NotOnAws", message);
      status.condition(COND_READY, false, "NotOnAws", message);
      return Optional.empty();
    }
    Optional<String> eni = ec2.interfaceHolding(instance.get(), a.podIp());
    if (eni.isEmpty()) {
      String message = "pod IP " + a.podIp() + " is on no network interface of " + instance.get() + " (node "
          + a.nodeName() + "): the pod has no VPC address (the AWS VPC CNI, or Cilium in ENI mode, gives it one)";
      events.warning(pod, "EniNotFound", message);
      status.condition(COND_READY, false, "EniNotFound", message);
    }
    return eni;
  }

  /**
   * A terminating pod (JOSDK does not reconcile a pod being deleted without a finalizer of its own, so its Eip
   * does): once its address is disassociated the old operator's finalizer goes, and its autocreated Eip is deleted,
   * which releases the address.
   */
  private void podTerminating(Eip eip, Pod pod) {
    String name = pod.getMetadata().getName();
    LegacyFinalizers.removeFromPod(client, pod);
    if (autocreated(eip, name) && eip.getMetadata().getName().equals(name)
        && "true".equalsIgnoreCase(labels(pod).get(EipNames.AUTOCREATE_LABEL))
        && eip.getMetadata().getDeletionTimestamp() == null) {
      client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace()).withName(eip.getMetadata().getName())
          .delete();
      LOG.info("pod {}/{} terminating: its autocreated Eip is deleted (its address is released)",
          pod.getMetadata().getNamespace(), name);
    }
  }

  static Optional<String> branchEni(String annotation) {
    try {
      var list = JSON.readTree(annotation);
      if (list != null && list.isArray() && !list.isEmpty() && list.get(0).hasNonNull("eniId")
          && !list.get(0).get("eniId").asText().isBlank()) {
        return Optional.of(list.get(0).get("eniId").asText());
      }
    } catch (JsonProcessingException e) {
      // fall through: malformed
    }
    return Optional.empty();
  }

  /** The annotations external-dns and users read, on the pod holding the address. */
  private void annotate(Pod pod, ElasticIp address) {
    Map<String, String> a = pod.getMetadata().getAnnotations() == null ? Map.of() : pod.getMetadata().getAnnotations();
    if (address.allocationId().equals(a.get(EipNames.ALLOCATION_ID_ANNOTATION))
        && address.publicIp().equals(a.get(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION))) {
      return;
    }
    Map<String, Object> annotations = new LinkedHashMap<>();
    annotations.put(EipNames.ALLOCATION_ID_ANNOTATION, address.allocationId());
    annotations.put(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, address.publicIp());
    patchPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), annotations);
  }

  /** Removes our annotations from the pod the status named, when the address is no longer there. */
  private void unannotatePrevious(Eip eip, String exceptPod) {
    String previous = eip.getStatus() == null ? null : eip.getStatus().resourceId();
    if (previous == null || previous.equals(exceptPod) || podName(eip) == null) {
      return;
    }
    unannotate(eip, previous);
  }

  private void unannotate(Eip eip, String podName) {
    Pod pod = client.pods().inNamespace(eip.getMetadata().getNamespace()).withName(podName).get();
    if (pod == null || pod.getMetadata().getAnnotations() == null) {
      return;
    }
    String allocation = pod.getMetadata().getAnnotations().get(EipNames.ALLOCATION_ID_ANNOTATION);
    String ours = eip.getStatus() == null ? null : eip.getStatus().allocationId();
    if (allocation == null || (ours != null && !ours.equals(allocation))) {
      return; // another Eip's by now
    }
    Map<String, Object> annotations = new LinkedHashMap<>();
    annotations.put(EipNames.ALLOCATION_ID_ANNOTATION, null);
    annotations.put(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, null);
    patchPod(eip.getMetadata().getNamespace(), podName, annotations);
  }

  private void patchPod(String ns, String name, Map<String, Object> annotations) {
    Map<String, Object> metadata = Map.of("annotations", annotations);
    try {
      client.pods().inNamespace(ns).withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), json(Map.of("metadata", metadata)));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /** Nothing may hold the address now: disassociate it if it is, say why. */
  void detach(Eip eip, ElasticIp address, StatusDraft status, String reason, String message) {
    if (address.associated()) {
      status.awsChanged = true;
      ec2.disassociate(address.associationId());
      events.normal(eip, "Disassociated", address.publicIp() + " disassociated from " + address.privateIp() + ": "
          + message);
    }
    if (podName(eip) != null) {
      unannotatePrevious(eip, null);
    }
    status.detached();
    status.condition(COND_READY, false, reason, message);
  }

  private static PodView view(Pod p) {
    String manage = labels(p).get(EipNames.MANAGE_LABEL);
    return new PodView(p.getMetadata().getName(), manage != null && !"false".equalsIgnoreCase(manage),
        p.getMetadata().getDeletionTimestamp() != null, p.getSpec().getNodeName(),
        p.getStatus() == null ? null : p.getStatus().getPodIP());
  }

  // --- cleanup -----------------------------------------------------------------------------------

  @Override
  public DeleteControl cleanup(Eip eip, Context<Eip> context) {
    try {
      boolean retain = eip.getSpec() != null && eip.getSpec().retain();
      for (ElasticIp a : ownAddresses(eip, null, null)) {
        synchronized (addressLocks.of(a.allocationId())) {
          giveBack(eip, a, retain);
        }
      }
    } catch (ElasticIpException e) {
      events.warning(eip, "AwsError", "cannot release the address: " + e.getMessage());
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(RETRY_AWS);
    }
    String resource = eip.getStatus() == null ? null : eip.getStatus().resourceId();
    if (resource != null && podName(eip) != null) {
      unannotate(eip, resource);
    }
    nodeMode.forget(eip, nodeSelector(eip) != null ? resource : null);
    metrics.gone(eip.key());
    return DeleteControl.defaultDelete();
  }

  /** Disassociates the address, then releases it or (Retain) removes our tags, then frees its ledger claim. */
  private void giveBack(Eip eip, ElasticIp a, boolean retain) {
    if (a.associated()) {
      ec2.disassociate(a.associationId());
    }
    if (retain) {
      ec2.untag(a.allocationId(), EipNames.RESERVED_TAGS);
      LOG.info("Eip {} deleted: {} retained (reclaimPolicy Retain), untagged", eip.key(), a.publicIp());
    } else {
      ec2.release(a.allocationId());
      LOG.info("Eip {} deleted: {} released", eip.key(), a.publicIp());
    }
    ledger.release(Ip.parse(a.publicIp()), owner(eip));
    claimed.remove(a.allocationId());
  }

  // --- status ------------------------------------------------------------------------------------

  /** The status being worked out; written once at the end (and the address alone right after allocation). */
  static final class StatusDraft {
    final Eip eip;
    String allocationId;
    String publicIp;
    String eni;
    String privateIp;
    String resourceId;
    String associationId;
    List<Condition> conditions;
    String readyReason;
    String readyMessage;
    /** This reconcile changed (or tried to change) the Eip's addresses in AWS. */
    boolean awsChanged;

    StatusDraft(Eip eip) {
      this.eip = eip;
      EipStatus s = eip.getStatus();
      if (s != null) {
        allocationId = s.allocationId();
        publicIp = s.publicIpAddress();
        eni = s.eni();
        privateIp = s.privateIpAddress();
        resourceId = s.resourceId();
        associationId = s.associationId();
        conditions = s.conditions();
      }
    }

    void condition(String type, boolean value, String reason, String message) {
      conditions = Conditions.set(conditions, type, value, reason, message, eip.getMetadata().getGeneration());
      if (COND_READY.equals(type)) {
        readyReason = reason;
        readyMessage = message;
      }
    }

    void attached(String eni, String privateIp, String resourceId, String associationId) {
      this.eni = eni;
      this.privateIp = privateIp;
      this.resourceId = resourceId;
      this.associationId = associationId;
    }

    void detached() {
      attached(null, null, null, null);
    }

    EipStatus build() {
      return new EipStatus(allocationId, publicIp, eni, privateIp, resourceId, associationId, conditions,
          eip.getMetadata().getGeneration());
    }
  }

  private UpdateControl<Eip> finish(Eip eip, StatusDraft draft, Duration again) {
    EipStatus status = draft.build();
    metrics.eip(eip.key(), status.allocationId() != null, status.associationId() != null);
    if (!status.equals(eip.getStatus())) {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("allocationId", status.allocationId());
      s.put("publicIpAddress", status.publicIpAddress());
      s.put("eni", status.eni());
      s.put("privateIpAddress", status.privateIpAddress());
      s.put("resourceId", status.resourceId());
      s.put("associationId", status.associationId());
      s.put("conditions", status.conditions());
      s.put("observedGeneration", status.observedGeneration());
      patchStatus(eip, s);
    }
    UpdateControl<Eip> control = UpdateControl.noUpdate();
    return again == null ? control : control.rescheduleAfter(again);
  }

  /** JSON merge patch of the status subresource: a null removes a field (the old operator's included). */
  private void patchStatus(Eip eip, Map<String, Object> fields) {
    try {
      client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace()).withName(eip.getMetadata().getName())
          .subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), json(Map.of("status", fields)));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  private String json(Object value) {
    try {
      return JSON.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  // --- small readers -----------------------------------------------------------------------------

  static String podName(Eip e) {
    EipSelector s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.pod() == null ? null : s.pod().podName();
  }

  static Map<String, String> nodeSelector(Eip e) {
    EipSelector s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.node() == null ? null : s.node().selector();
  }

  static Map<String, String> labels(io.fabric8.kubernetes.api.model.HasMetadata o) {
    return o.getMetadata().getLabels() == null ? Map.of() : o.getMetadata().getLabels();
  }

  static String annotation(io.fabric8.kubernetes.api.model.HasMetadata o, String key) {
    return o.getMetadata().getAnnotations() == null ? null : o.getMetadata().getAnnotations().get(key);
  }

  static boolean ready(Node n) {
    return n.getStatus() != null && n.getStatus().getConditions() != null && n.getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  static String internalIp(Node n) {
    if (n == null || n.getStatus() == null || n.getStatus().getAddresses() == null) {
      return null;
    }
    return n.getStatus().getAddresses().stream().filter(a -> "InternalIP".equals(a.getType()))
        .map(NodeAddress::getAddress).filter(a -> a != null && a.indexOf(':') < 0).findFirst().orElse(null);
  }
}
