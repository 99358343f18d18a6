package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.ServiceVipReconciler;
import org.ipamoperators.vip.VipServices;
import org.ipamoperators.vip.VipSettings;
import org.ipamoperators.vip.api.IPGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The old operator's migration of a legacy {@code VirtualIP} to a LoadBalancer Service, same
 * semantics: the user adds the annotation {@code virtualips.paas.org/migrate} to a {@code Valid}
 * VirtualIP and the steps run in order, each recorded in {@code status.state} so a restart resumes
 * where it stopped: preparing (the Service must not be a LoadBalancer yet), reassociating (the
 * address is claimed in the ledger for the Service, in the IPGroup containing it), cleaning up (the
 * VirtualIP's finalizers go and its keepalived clone Service is deleted), converting (the Service
 * becomes {@code type: LoadBalancer} with {@code loadBalancerIP} set to the address) and assigning
 * (the Service controller publishes the address; {@code loadBalancerIP} is cleared again when the
 * VirtualIP did not ask for a specific address) to {@code Migrated}. Without the old webhook the
 * annotation cannot be protected: removing it mid-way does not stop the migration (an Event says
 * so). A VirtualIP deleted without migrating loses its clone, its address and its finalizers.
 */
public final class VirtualIPMigration implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VirtualIPMigration.class);
  private final KubernetesClient client;
  private final VipSettings settings;
  private final ClusterLedger ledger;
  private final EventRecorder events;
  private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "vip-virtualip-migration");
    t.setDaemon(true);
    return t;
  });
  private SharedIndexInformer<GenericKubernetesResource> informer;

  /** With the settings of the environment ({@link VipSettings#fromEnvironment}). */
  public VirtualIPMigration(KubernetesClient client) {
    this(client, VipSettings.fromEnvironment());
  }

  public VirtualIPMigration(KubernetesClient client, VipSettings settings) {
    this.client = client;
    this.settings = settings;
    this.ledger = new ClusterLedger(client);
    this.events = new EventRecorder(client, "vip-controller");
  }

  /** Watches VirtualIPs when their kind is installed; returns whether it is. */
  public boolean start() {
    if (LegacyAdoption.list(client, LegacyKinds.VIRTUAL_IP, true).isEmpty()) {
      return false;
    }
    informer = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inAnyNamespace()
        .inform(new ResourceEventHandler<>() {
          @Override
          public void onAdd(GenericKubernetesResource v) {
            submit(v, 0);
          }

          @Override
          public void onUpdate(GenericKubernetesResource o, GenericKubernetesResource v) {
            submit(v, 0);
          }

          @Override
          public void onDelete(GenericKubernetesResource v, boolean unknown) {}
        }, TimeUnit.MINUTES.toMillis(1));
    return true;
  }

  private void submit(GenericKubernetesResource v, long delaySeconds) {
    String ns = v.getMetadata().getNamespace();
    String name = v.getMetadata().getName();
    worker.schedule(() -> {
      try {
        reconcile(ns, name);
      } catch (RuntimeException e) {
        LOG.warn("VirtualIP {}/{}: {}; retried on the next resync", ns, name, e.toString());
      }
    }, delaySeconds, TimeUnit.SECONDS);
  }

  private GenericKubernetesResource get(String ns, String name) {
    return client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(ns).withName(name).get();
  }

  void reconcile(String ns, String name) {
    GenericKubernetesResource v = get(ns, name);
    if (v == null) {
      return;
    }
    String state = LegacyFields.status(v, "state");
    boolean migrating = state != null && state.startsWith("Migrating");
    if (v.getMetadata().getDeletionTimestamp() != null) {
      if (!LegacyKinds.MIGRATED.equals(state) && !migrating) {
        retire(v);
      }
      return;
    }
    state = begin(v, state, migrating);
    String ip = LegacyFields.status(v, "ip");
    String service = Optional.ofNullable(LegacyFields.status(v, "service")).orElse(LegacyFields.spec(v, "service"));
    while (state != null && !LegacyKinds.MIGRATED.equals(state)) {
      Service svc = client.services().inNamespace(ns).withName(service).get();
      state = switch (state) {
        case LegacyKinds.PREPARING -> preparing(v, svc, service);
        case LegacyKinds.REASSOCIATING -> reassociating(v, svc, service, ip);
        case LegacyKinds.CLEANING_UP -> cleaningUp(v);
        case LegacyKinds.CONVERTING -> converting(v, service, ip);
        case LegacyKinds.ASSIGNING -> assigning(v, svc, service, ip);
        default -> null;
      };
      if (state == null) {
        return; // blocked, waiting, or a state this version does not know
      }
      v = get(ns, name);
    }
  }

  /**
   * Where a migration stands: the state to continue from, or null when there is nothing to do (not
   * asked, done already, or refused). A migration under way goes on even if the annotation was removed.
   */
  private String begin(GenericKubernetesResource v, String state, boolean migrating) {
    boolean asked = v.getMetadata().getAnnotations() != null
        && v.getMetadata().getAnnotations().containsKey(LegacyKinds.MIGRATE_ANNOTATION);
    if (!migrating) {
      if (!asked || LegacyKinds.MIGRATED.equals(state)) {
        return null;
      }
      if (!LegacyKinds.STATE_VALID.equals(state)) {
        events.warning(v, "MigrationRefused", "not valid VirtualIP can not be migrated (state " + state + ")");
        return null;
      }
      return step(v, LegacyKinds.PREPARING, "");
    }
    if (!asked) {
      events.warning(v, "MigrationContinues", "migration can not be stopped: the " + LegacyKinds.MIGRATE_ANNOTATION
          + " annotation was removed during state '" + state + "'");
    }
    return state;
  }

  private String preparing(GenericKubernetesResource v, Service svc, String service) {
    String state = LegacyKinds.PREPARING;
    if (svc == null) {
      blocked(v, state, "service " + service + " not found");
      return null;
    }
    if ("LoadBalancer".equals(svc.getSpec().getType()) || !VipServices.ingress(svc).isEmpty()) {
      blocked(v, state, "service is already of type LoadBalancer, change service type to proceed with migration");
      return null;
    }
    return step(v, LegacyKinds.REASSOCIATING, "");
  }

  private String reassociating(GenericKubernetesResource v, Service svc, String service, String ip) {
    String state = LegacyKinds.REASSOCIATING;
    Ip address = Ip.parse(ip);
    List<IPGroup> groups = client.resources(IPGroup.class).list().getItems();
    Optional<String> group = LegacyAdoption.containing(address, groups);
    if (group.isEmpty() || svc == null) {
      blocked(v, state, svc == null ? "service " + service + " not found"
          : "no IPGroup contains " + ip + "; create IPGroups from the GroupSegmentMappings first");
      return null;
    }
    ClaimResult r = ledger.claim(address, "ipgroup/" + group.get(), ServiceVipReconciler.owner(svc),
        Map.of(LegacyAdoption.LABEL_ADOPTED, LegacyReservations.VIRTUAL_IP));
    if (!r.ours()) {
      blocked(v, state, ip + " is held by " + r.holder().describe());
      return null;
    }
    relabelLegacyIp(ip, group.get(), v.getMetadata().getNamespace() + "/" + service);
    return step(v, LegacyKinds.CLEANING_UP, "");
  }

  private String cleaningUp(GenericKubernetesResource v) {
    String ns = v.getMetadata().getNamespace();
    String name = v.getMetadata().getName();
    removeFinalizer(v, LegacyKinds.VIP_IP_FINALIZER);
    deleteClone(v);
    removeFinalizer(get(ns, name), LegacyKinds.VIP_SERVICE_FINALIZER);
    return step(get(ns, name), LegacyKinds.CONVERTING, "");
  }

  private String converting(GenericKubernetesResource v, String service, String ip) {
    client.services().inNamespace(v.getMetadata().getNamespace()).withName(service).edit(s -> {
      s.getSpec().setType("LoadBalancer");
      s.getSpec().setLoadBalancerIP(ip);
      return s;
    });
    return step(v, LegacyKinds.ASSIGNING, "");
  }

  private String assigning(GenericKubernetesResource v, Service svc, String service, String ip) {
    String ns = v.getMetadata().getNamespace();
    if (svc == null || !VipServices.ingress(svc).contains(ip)) {
      submit(v, 2); // the Service controller publishes the address shortly
      return null;
    }
    if (LegacyFields.spec(v, "ip") == null && ip.equals(svc.getSpec().getLoadBalancerIP())) {
      client.services().inNamespace(ns).withName(service).edit(s -> {
        s.getSpec().setLoadBalancerIP(null);
        return s;
      });
    }
    LegacyFields.setStatus(v, "keepalivedGroup", null);
    LegacyFields.setStatus(v, "gsm", null);
    LegacyFields.setStatus(v, "clonedService", null);
    String state = step(v, LegacyKinds.MIGRATED, "VirtualIP has been migrated");
    events.normal(v, "Migrated", "Service " + ns + "/" + service + " is a LoadBalancer with " + ip
        + "; this VirtualIP can be deleted");
    return state;
  }

  /** Records the next state (and message) in the status; returns it. */
  private String step(GenericKubernetesResource v, String state, String message) {
    LegacyFields.setStatus(v, "state", state);
    LegacyFields.setStatus(v, "message", message);
    writeStatus(v);
    return state;
  }

  private void blocked(GenericKubernetesResource v, String state, String message) {
    if (!message.equals(LegacyFields.status(v, "message"))) {
      LegacyFields.setStatus(v, "message", message);
      writeStatus(v);
    }
    events.warning(v, "MigrationBlocked", message);
    LOG.info("VirtualIP {}/{} stays in '{}': {}", v.getMetadata().getNamespace(), v.getMetadata().getName(), state, message);
  }

  private void writeStatus(GenericKubernetesResource v) {
    var r = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(v.getMetadata().getNamespace())
        .resource(v);
    try {
      GenericKubernetesResource written = r.updateStatus();
      v.getMetadata().setResourceVersion(written.getMetadata().getResourceVersion());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      // a VirtualIP definition without the status subresource
      GenericKubernetesResource written = r.update();
      v.getMetadata().setResourceVersion(written.getMetadata().getResourceVersion());
    }
  }

  private void removeFinalizer(GenericKubernetesResource v, String finalizer) {
    if (v == null || v.getMetadata().getFinalizers() == null || !v.getMetadata().getFinalizers().contains(finalizer)) {
      return;
    }
    client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).inNamespace(v.getMetadata().getNamespace())
        .withName(v.getMetadata().getName()).edit(x -> {
          x.getMetadata().getFinalizers().remove(finalizer);
          return x;
        });
  }

  /** The old operator's IP object follows the address to the Service, as the old migration did (best effort). */
  private void relabelLegacyIp(String ip, String group, String owner) {
    try {
      client.genericKubernetesResources(LegacyKinds.IP).withName(ip).edit(o -> {
        if (o.getMetadata().getLabels() != null) {
          o.getMetadata().getLabels().remove(LegacyKinds.LABEL_GSM);
        }
        o.getMetadata().setLabels(new java.util.HashMap<>(o.getMetadata().getLabels() == null ? Map.of()
            : o.getMetadata().getLabels()));
        o.getMetadata().getLabels().put(LegacyKinds.LABEL_IPGROUP, group);
        o.getMetadata().setAnnotations(new java.util.HashMap<>(o.getMetadata().getAnnotations() == null ? Map.of()
            : o.getMetadata().getAnnotations()));
        o.getMetadata().getAnnotations().put(LegacyKinds.OWNER_ANNOTATION, owner);
        return o;
      });
    } catch (KubernetesClientException e) {
      LOG.info("IP object {} left as it was: {}", ip, e.getMessage());
    }
  }

  /** A VirtualIP deleted without migrating: its clone and address go, then its finalizers. */
  private void retire(GenericKubernetesResource v) {
    String ns = v.getMetadata().getNamespace();
    deleteClone(v);
    String ip = LegacyFields.status(v, "ip");
    String service = Optional.ofNullable(LegacyFields.status(v, "service")).orElse(LegacyFields.spec(v, "service"));
    if (ip != null && service != null) {
      Service svc = client.services().inNamespace(ns).withName(service).get();
      if (svc == null || !settings.handles(svc)) {
        try {
          ledger.release(Ip.parse(ip), new org.ipamoperators.controller.common.ledger.ClaimOwner(
              ServiceVipReconciler.CONTROLLER, "Service", ns, service, null));
        } catch (IllegalArgumentException e) {
          // not an address
        }
      }
    }
    removeFinalizer(v, LegacyKinds.VIP_SERVICE_FINALIZER);
    removeFinalizer(get(ns, v.getMetadata().getName()), LegacyKinds.VIP_IP_FINALIZER);
  }

  /**
   * Deletes the keepalived clone the old operator made for {@code v}: only a Service of that name that the
   * VirtualIP owns (the old operator set an owner reference to it on every clone), and only the very Service
   * read (a DELETE with its uid as precondition). Another Service of that name is left, with an Event on the
   * VirtualIP; the migration goes on, as there is no clone of ours to wait for.
   */
  private void deleteClone(GenericKubernetesResource v) {
    String ns = v.getMetadata().getNamespace();
    String clone = Optional.ofNullable(LegacyFields.status(v, "clonedService"))
        .orElse(v.getMetadata().getName() + LegacyKinds.CLONE_SUFFIX);
    Service svc = client.services().inNamespace(ns).withName(clone).get();
    if (svc == null) {
      return;
    }
    if (!LegacyClone.isCloneOf(svc, v)) {
      events.warning(v, "CloneKept", "Service " + ns + "/" + clone + " is not this VirtualIP's keepalived clone (no "
          + "owner reference to it): left in place");
      return;
    }
    if (!LegacyClone.deleteIfSame(client, svc)) {
      events.warning(v, "CloneKept", "Service " + ns + "/" + clone + " was replaced after it was read: left in place");
    }
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
    worker.shutdownNow();
  }
}
