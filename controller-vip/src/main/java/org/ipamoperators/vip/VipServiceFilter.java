package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;

/**
 * Lets through only Services this controller serves, those that carry a finalizer of an older
 * version (removed once) and, on an update, those it served until this change (it lets go of
 * them: unpublish, then release). Everything else in the cluster is never reconciled. Delete
 * events always pass: a deleted Service's claims (if any) are released on its delete event. An update
 * that is only this process's own status write coming back, after which the Service was served, is
 * not reconciled again ({@link OwnStatusWrites}).
 */
public class VipServiceFilter implements OnAddFilter<Service> {
  private final VipSettings settings;

  /** As the annotation names it, for a reconciler registered without {@link ServiceVipReconciler#configure}. */
  public VipServiceFilter() {
    this(VipSettings.fromEnvironment());
  }

  VipServiceFilter(VipSettings settings) {
    this.settings = settings;
  }

  @Override
  public boolean accept(Service s) {
    return settings.handles(s) || VipServices.hasFinalizer(s);
  }

  /** Updates: served now or before the change, or carrying an old finalizer. */
  public static class OnUpdate implements OnUpdateFilter<Service> {
    private final OwnStatusWrites ownWrites;
    private final VipSettings settings;

    /**
     * As the annotation names it, for a reconciler registered without {@link ServiceVipReconciler#configure}:
     * no write is known to it, so every echo is reconciled.
     */
    public OnUpdate() {
      this(new OwnStatusWrites(), VipSettings.fromEnvironment());
    }

    /** Skipping the echoes of the writes noted in {@code ownWrites}. */
    OnUpdate(OwnStatusWrites ownWrites, VipSettings settings) {
      this.ownWrites = ownWrites;
      this.settings = settings;
    }

    @Override
    public boolean accept(Service now, Service before) {
      if (ownWrites.isEcho(now, before)) {
        return false; // only our own write that left it served, coming back
      }
      return settings.handles(now) || VipServices.hasFinalizer(now) || settings.handles(before);
    }
  }
}
