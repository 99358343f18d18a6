package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;

/**
 * Lets through only Services this controller serves, and those it served (they carry its
 * finalizer) so that it can let go of them. Everything else in the cluster is never reconciled and
 * never gets a finalizer.
 */
public class VipServiceFilter implements GenericFilter<Service> {
  @Override
  public boolean accept(Service s) {
    return VipServices.handles(s) || VipServices.hasFinalizer(s);
  }
}
