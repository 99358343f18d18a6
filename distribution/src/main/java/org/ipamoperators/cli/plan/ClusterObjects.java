package org.ipamoperators.cli.plan;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.vip.api.IPGroup;

/**
 * Kubernetes objects as {@code kubectl get -o yaml} prints them (documents separated by
 * {@code ---}, or a {@code List}), sorted by the kinds {@code ipam plan} decides from. Kinds it does
 * not use are counted and left out, so a whole namespace dump can be given as it is.
 */
record ClusterObjects(List<EgressIPAM> egressIpams, List<Namespace> namespaces, List<Node> nodes,
    List<IPClaim> claims, List<IPBlock> blocks, List<HostSubnet> hostSubnets, List<IPGroup> ipGroups,
    List<Service> services, Map<String, Integer> ignored) {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  /** A file of objects, as opposed to a plan file: its first document has an apiVersion and a kind. */
  static boolean looksLikeObjects(String text) {
    try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(text)) {
      while (docs.hasNext()) {
        JsonNode doc = docs.next();
        if (doc != null && !doc.isNull() && !doc.isMissingNode()) {
          return doc.isObject() && doc.hasNonNull("apiVersion") && doc.hasNonNull("kind");
        }
      }
      return false;
    } catch (IOException | RuntimeException e) {
      return false; // not YAML at all: the plan file reader explains what is wrong
    }
  }

  static ClusterObjects parse(String source, String text) throws PlanFileException {
    List<EgressIPAM> ipams = new ArrayList<>();
    List<Namespace> namespaces = new ArrayList<>();
    List<Node> nodes = new ArrayList<>();
    List<IPClaim> claims = new ArrayList<>();
    List<IPBlock> blocks = new ArrayList<>();
    List<HostSubnet> subnets = new ArrayList<>();
    List<IPGroup> groups = new ArrayList<>();
    List<Service> services = new ArrayList<>();
    Map<String, Integer> ignored = new java.util.TreeMap<>();
    List<JsonNode> objects = new ArrayList<>();
    try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(text)) {
      int n = 0;
      while (docs.hasNext()) {
        n++;
        JsonNode doc = docs.next();
        if (doc == null || doc.isNull() || doc.isMissingNode()) {
          continue;
        }
        flatten(source + " document " + n, doc, objects);
      }
    } catch (IOException | RuntimeException e) {
      throw new PlanFileException(source + ": not YAML: " + e.getMessage().lines().findFirst().orElse(""));
    }
    for (JsonNode o : objects) {
      String kind = o.path("kind").asText();
      String group = o.path("apiVersion").asText().contains("/") ? o.path("apiVersion").asText().split("/")[0] : "";
      String name = o.path("metadata").path("name").asText(null);
      if (name == null) {
        throw new PlanFileException(source + ": a " + kind + " without metadata.name");
      }
      try {
        switch (group + "/" + kind) {
          case "redhatcop.redhat.io/EgressIPAM" -> ipams.add(convert(o, EgressIPAM.class));
          case "/Namespace" -> namespaces.add(convert(o, Namespace.class));
          case "/Node" -> nodes.add(convert(o, Node.class));
          case "ipam.ipamoperators.org/IPClaim" -> claims.add(convert(o, IPClaim.class));
          case "ipam.ipamoperators.org/IPBlock" -> blocks.add(convert(o, IPBlock.class));
          case "network.openshift.io/HostSubnet" -> subnets.add(convert(o, HostSubnet.class));
          case "paas.org/IPGroup" -> groups.add(convert(o, IPGroup.class));
          case "/Service" -> services.add(convert(o, Service.class));
          default -> ignored.merge(kind, 1, Integer::sum);
        }
      } catch (IllegalArgumentException e) {
        throw new PlanFileException(source + ": " + kind + " " + name + ": " + e.getMessage().lines().findFirst().orElse(""));
      }
    }
    return new ClusterObjects(ipams, namespaces, nodes, claims, blocks, subnets, groups, services, ignored);
  }

  private static void flatten(String where, JsonNode doc, List<JsonNode> out) throws PlanFileException {
    if (!doc.isObject() || !doc.hasNonNull("kind") || !doc.hasNonNull("apiVersion")) {
      throw new PlanFileException(where + ": not a Kubernetes object (no apiVersion and kind)");
    }
    if (doc.path("kind").asText().endsWith("List") && doc.path("items").isArray()) {
      for (JsonNode item : doc.path("items")) {
        flatten(where, item, out);
      }
    } else {
      out.add(doc);
    }
  }

  private static <T extends HasMetadata> T convert(JsonNode o, Class<T> type) {
    return YAML.convertValue(o, type);
  }
}
