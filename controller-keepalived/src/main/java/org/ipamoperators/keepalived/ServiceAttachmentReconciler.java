package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;

/**
 * Tells a Service why no group takes it: its {@code keepalivedgroup} annotation is not {@code namespace/name}, or
 * names a group that does not exist (Warning Events; keepalived-operator only logged these). What a group finds
 * wrong with the Services it does take is reported by {@link KeepalivedGroupReconciler}. Reads only; writes nothing
 * but Events.
 */
@ControllerConfiguration(name = "keepalived-services", generationAwareEventProcessing = false,
    informer = @Informer(genericFilter = ServiceAttachmentReconciler.Annotated.class))
public class ServiceAttachmentReconciler implements Reconciler<Service> {
  private final EventRecorder events;
  private InformerEventSource<KeepalivedGroup, Service> groups;

  /** Only Services with the group annotation. */
  public static final class Annotated implements GenericFilter<Service> {
    @Override
    public boolean accept(Service s) {
      return AttachedService.hasGroupAnnotation(s);
    }
  }

  public ServiceAttachmentReconciler(KubernetesClient client) {
    this.events = new EventRecorder(client, "keepalived-controller");
  }

  @Override
  public List<EventSource<?, Service>> prepareEventSources(EventSourceContext<Service> context) {
    groups = new InformerEventSource<>(InformerEventSourceConfiguration.from(KeepalivedGroup.class, Service.class)
        .withSecondaryToPrimaryMapper(g -> context.getPrimaryCache()
            .list(s -> AttachedService.groupKey(s).filter(g.key()::equals).isPresent())
            .map(ResourceID::fromResource).collect(Collectors.toSet())).build(), context);
    return List.of(groups);
  }

  @Override
  public UpdateControl<Service> reconcile(Service s, Context<Service> context) {
    if (!AttachedService.hasGroupAnnotation(s) || !AttachedService.eligible(s)) {
      return UpdateControl.noUpdate();
    }
    Optional<String> key = AttachedService.groupKey(s);
    if (key.isEmpty()) {
      events.warning(s, "InvalidKeepalivedGroup", "annotation " + KeepalivedAnnotations.GROUP + " must be"
          + " <namespace>/<name> of a KeepalivedGroup, not "
          + AttachedService.quoted(AttachedService.annotations(s).get(KeepalivedAnnotations.GROUP))
          + ": the VIPs are not announced");
      return UpdateControl.noUpdate();
    }
    int slash = key.get().indexOf('/');
    boolean exists = groups.get(new ResourceID(key.get().substring(slash + 1), key.get().substring(0, slash)))
        .filter(g -> g.getMetadata().getDeletionTimestamp() == null).isPresent();
    if (!exists) {
      events.warning(s, "KeepalivedGroupNotFound", "KeepalivedGroup " + key.get()
          + " does not exist: the VIPs are not announced");
    }
    return UpdateControl.noUpdate();
  }
}
