package org.ipamoperators.vip.plan;

import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.IpFamily;

/**
 * What a LoadBalancer Service asks for, as read from the cluster: its labels and its namespace's,
 * the IPGroup it names (or null), the addresses it requests (as written, possibly invalid), the
 * families it must get and those it would like (PreferDualStack), the addresses its status shows
 * today (kept when their claim has gone missing and nobody else took them) and, when it carries a
 * sharing key, the key and its own entry as a sharing member (ports, backend).
 */
public record ServiceRequest(String namespace, String name, Map<String, String> labels,
    Map<String, String> namespaceLabels, String ipGroup, List<String> requested, List<IpFamily> families,
    List<IpFamily> optionalFamilies, List<String> current, String sharingKey, ShareMember member) {

  public ServiceRequest {
    labels = labels == null ? Map.of() : labels;
    namespaceLabels = namespaceLabels == null ? Map.of() : namespaceLabels;
    requested = requested == null ? List.of() : requested;
    optionalFamilies = optionalFamilies == null ? List.of() : optionalFamilies;
    current = current == null ? List.of() : current;
    if (sharingKey != null && member == null) {
      member = new ShareMember(namespace + "/" + name, null, List.of(), "");
    }
  }

  public ServiceRequest(String namespace, String name, Map<String, String> labels, Map<String, String> namespaceLabels,
      String ipGroup, List<String> requested, List<IpFamily> families, List<IpFamily> optionalFamilies) {
    this(namespace, name, labels, namespaceLabels, ipGroup, requested, families, optionalFamilies, List.of(), null, null);
  }

  public String key() {
    return namespace + "/" + name;
  }

  public boolean sharing() {
    return sharingKey != null;
  }
}
