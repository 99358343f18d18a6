package org.ipamoperators.vip.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code IPGroup} (paas.org/v1, cluster-scoped): a pool of LoadBalancer addresses. The group, kind
 * and the {@code segment}/{@code excludedIPs} fields are paas-team-324's vip-allocator-operator's,
 * so its objects keep working; ranges, IPv6, selectors, priority and strategy are new.
 */
@Group("paas.org")
@Version("v1")
@Kind("IPGroup")
@Plural("ipgroups")
@ShortNames("ipg")
@AdditionalPrinterColumn(name = "Segment", jsonPath = ".spec.segment")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Used", jsonPath = ".status.used", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Free", jsonPath = ".status.free")
@AdditionalPrinterColumn(name = "Priority", jsonPath = ".spec.priority", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class IPGroup extends CustomResource<IPGroupSpec, IPGroupStatus> {
  private static final long serialVersionUID = 1L;
}
