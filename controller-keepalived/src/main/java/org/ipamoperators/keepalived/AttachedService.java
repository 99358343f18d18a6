package org.ipamoperators.keepalived;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.pool.SpecialAddresses;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.config.ServiceRef;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.keepalived.config.Verbatim;

/**
 * A Service pointing to a group, as the planner needs it, and what was wrong with its annotations or addresses
 * (each a Warning Event on the Service; the rest of it is still used). An address of {@link SpecialAddresses}
 * is a problem and is left out.
 */
record AttachedService(Service service, ServiceVips vips, List<String> problems) {
  private static final ObjectMapper JSON = new ObjectMapper();

  static Map<String, String> annotations(Service s) {
    return s.getMetadata().getAnnotations() == null ? Map.of() : s.getMetadata().getAnnotations();
  }

  /** The group key ({@code ns/name}) the annotation names, if it is well formed (exactly one slash, both parts). */
  static Optional<String> groupKey(Service s) {
    String v = annotations(s).get(KeepalivedAnnotations.GROUP);
    if (v == null) {
      return Optional.empty();
    }
    String t = v.trim();
    int slash = t.indexOf('/');
    if (slash <= 0 || slash != t.lastIndexOf('/') || slash == t.length() - 1) {
      return Optional.empty();
    }
    return Optional.of(t);
  }

  static boolean hasGroupAnnotation(Service s) {
    return annotations(s).containsKey(KeepalivedAnnotations.GROUP);
  }

  /** A LoadBalancer, or a Service with external IPs: the kinds keepalived-operator announced. */
  static boolean eligible(Service s) {
    if (s.getSpec() == null) {
      return false;
    }
    return "LoadBalancer".equals(s.getSpec().getType())
        || (s.getSpec().getExternalIPs() != null && !s.getSpec().getExternalIPs().isEmpty());
  }

  static String key(Service s) {
    return s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
  }

  /** Reads the VIPs (ingress IPs and external IPs), spread, verbatim lines and health check of a Service. */
  static AttachedService read(Service s) {
    List<String> problems = new ArrayList<>();
    SortedSet<Ip> vips = new TreeSet<>();
    List<String> texts = new ArrayList<>();
    if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
        && s.getStatus().getLoadBalancer().getIngress() != null) {
      s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp)
          .filter(ip -> ip != null && !ip.isBlank()).forEach(texts::add);
    }
    if (s.getSpec().getExternalIPs() != null) {
      texts.addAll(s.getSpec().getExternalIPs());
    }
    for (String text : texts) {
      Ip ip;
      try {
        ip = Ip.parse(text.trim());
      } catch (RuntimeException e) {
        problems.add(quoted(text) + " is not an IP address: not announced");
        continue;
      }
      // Loopback, link-local (the metadata address), multicast...: whoever wrote it, never announced by VRRP.
      Optional<String> special = SpecialAddresses.whyNeverAnnounced(ip);
      if (special.isPresent()) {
        problems.add(special.get() + ": never announced");
      } else {
        vips.add(ip);
      }
    }
    TreeMap<String, String> verbatim = new TreeMap<>();
    String raw = annotations(s).get(KeepalivedAnnotations.VERBATIM_CONFIG);
    if (raw != null && raw.length() > Verbatim.MAX_SERVICE_ANNOTATION) {
      problems.add("annotation " + KeepalivedAnnotations.VERBATIM_CONFIG + " is " + raw.length()
          + " characters long, more than the " + Verbatim.MAX_SERVICE_ANNOTATION + " a service may add to the"
          + " configuration of every node: ignored (the VIPs are announced without it)");
    } else if (raw != null && !raw.isBlank()) {
      try {
        Map<String, String> parsed = JSON.readValue(raw, new TypeReference<Map<String, String>>() {});
        if (parsed != null) {
          verbatim.putAll(parsed);
        }
      } catch (Exception e) {
        problems.add("annotation " + KeepalivedAnnotations.VERBATIM_CONFIG
            + " is not a JSON object of strings: ignored (the VIPs are announced without it)");
      }
    }
    String spreadText = annotations(s).getOrDefault(KeepalivedAnnotations.SPREAD_VIPS, "").trim();
    boolean spread = "true".equalsIgnoreCase(spreadText);
    if (!spread && !spreadText.isEmpty() && !"false".equalsIgnoreCase(spreadText)) {
      problems.add("annotation " + KeepalivedAnnotations.SPREAD_VIPS + " is " + quoted(spreadText)
          + ", not true or false: the VIPs are not spread");
    }
    OptionalInt health = OptionalInt.empty();
    Integer port = s.getSpec().getHealthCheckNodePort();
    if ("Local".equals(s.getSpec().getExternalTrafficPolicy()) && port != null && port > 0) {
      health = OptionalInt.of(port);
    }
    ServiceRef ref = new ServiceRef(s.getMetadata().getNamespace(), s.getMetadata().getName());
    return new AttachedService(s, new ServiceVips(ref, vips, spread, verbatim, health), problems);
  }

  /** A user's value in a message: quoted, cut to its first 64 characters with its length when longer. */
  static String quoted(String value) {
    return value.length() <= 64 ? "'" + value + "'" : "'" + value.substring(0, 64) + "...' (" + value.length()
        + " characters)";
  }
}
