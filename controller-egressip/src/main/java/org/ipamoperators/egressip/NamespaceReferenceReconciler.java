package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.Namespace;
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
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;

/**
 * Tells a namespace that its egressipam annotation names no EgressIPAM (reference scenario 45):
 * the IPAM controller never runs for a missing IPAM, so without this the namespace would wait in
 * silence. Looks again now and then, in case the name was a typo about to be fixed elsewhere.
 * Only namespaces that carry the annotation, and only changes of it, start a reconcile; the
 * EgressIPAMs are read from an informer, the namespaces kept trimmed to name, uid and annotations.
 */
@ControllerConfiguration(name = "egressipam-namespace-references", generationAwareEventProcessing = false,
    informer = @Informer(itemStore = NamespaceReferenceReconciler.TrimmedNamespaces.class,
        onAddFilter = NamespaceReferenceReconciler.OptedIn.class,
        onUpdateFilter = NamespaceReferenceReconciler.ReferenceChanged.class))
public class NamespaceReferenceReconciler implements Reconciler<Namespace> {
  private final EventRecorder events;
  private InformerEventSource<EgressIPAM, Namespace> ipams;

  public NamespaceReferenceReconciler(KubernetesClient client) {
    this.events = new EventRecorder(client, "egressipam-controller");
  }

  /** Namespaces as the egress controller keeps them. */
  public static final class TrimmedNamespaces extends TransformingItemStore<Namespace> {
    public TrimmedNamespaces() {
      super(Trimmed::namespace);
    }
  }

  public static final class OptedIn implements OnAddFilter<Namespace> {
    @Override
    public boolean accept(Namespace ns) {
      return reference(ns) != null;
    }
  }

  public static final class ReferenceChanged implements OnUpdateFilter<Namespace> {
    @Override
    public boolean accept(Namespace now, Namespace before) {
      return !Objects.equals(reference(now), reference(before));
    }
  }

  private static String reference(Namespace ns) {
    Map<String, String> a = ns.getMetadata().getAnnotations();
    return a == null ? null : a.get(EgressAnnotations.EGRESSIPAM);
  }

  @Override
  public List<EventSource<?, Namespace>> prepareEventSources(EventSourceContext<Namespace> context) {
    // Only read: an IPAM that appears is found at the namespace's next look.
    ipams = new InformerEventSource<>(InformerEventSourceConfiguration.from(EgressIPAM.class, Namespace.class)
        .withSecondaryToPrimaryMapper(ipam -> Set.of()).build(), context);
    return List.of(ipams);
  }

  @Override
  public UpdateControl<Namespace> reconcile(Namespace ns, Context<Namespace> context) {
    String ipam = reference(ns);
    if (ipam == null || ns.getMetadata().getDeletionTimestamp() != null) {
      return UpdateControl.noUpdate();
    }
    if (ipams.get(new ResourceID(ipam)).isEmpty()) {
      events.warning(ns, "EgressIPAMNotFound", "annotation " + EgressAnnotations.EGRESSIPAM + " names EgressIPAM '"
          + ipam + "', which does not exist; no egress IP is assigned until it does");
      return UpdateControl.<Namespace>noUpdate().rescheduleAfter(Duration.ofMinutes(5));
    }
    return UpdateControl.noUpdate();
  }
}
