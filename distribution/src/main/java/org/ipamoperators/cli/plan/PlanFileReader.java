package org.ipamoperators.cli.plan;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.InvalidAddressException;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.ledger.Claim;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.plan.Claimant;
import org.ipamoperators.core.plan.PlanInput;
import org.ipamoperators.core.plan.PoolDefinition;

/**
 * Reads a plan file into ipam-core's {@link PlanInput}. Every error names the line (for YAML and
 * type errors) or the field path (for values), never a stack trace. Pool ranges are left to the
 * planner, which reports bad ones per pool without stopping the rest.
 */
final class PlanFileReader {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

  private PlanFileReader() {}

  static PlanInput read(Path path) throws PlanFileException {
    String text;
    try {
      text = Files.readString(path);
    } catch (NoSuchFileException e) {
      throw new PlanFileException(path + ": no such file");
    } catch (IOException e) {
      throw new PlanFileException(path + ": cannot read: " + e.getMessage());
    }
    return parse(path.toString(), text);
  }

  static PlanInput parse(String source, String text) throws PlanFileException {
    if (text.isBlank()) {
      throw new PlanFileException(source + ": the file is empty; see examples/ for the format");
    }
    PlanFile file;
    try {
      file = YAML.readValue(text, PlanFile.class);
    } catch (JsonProcessingException e) {
      throw new PlanFileException(source + describe(e, text));
    }
    if (file == null) {
      throw new PlanFileException(source + ": the file is empty; see examples/ for the format");
    }
    List<String> errors = new ArrayList<>();
    List<PoolDefinition> pools = pools(file, errors);
    List<NodeState> nodes = nodes(file, errors);
    List<Claimant> claimants = claimants(file, errors);
    List<Claim> claims = claims(file, errors);
    PlacementOptions placement = placement(file, errors);
    if (!errors.isEmpty()) {
      throw new PlanFileException(errors.stream().map(e -> source + ": " + e)
          .collect(Collectors.joining("\n")));
    }
    return new PlanInput(pools, nodes, claimants, claims, placement);
  }

  private static String describe(JsonProcessingException e, String text) {
    JsonLocation at = e.getLocation();
    String where = at == null || at.getLineNr() < 0 ? ""
        : ":" + at.getLineNr() + ":" + at.getColumnNr();
    if (e instanceof UnrecognizedPropertyException u && at != null) {
      // Records are read whole before their fields are checked, so the parser has moved past the
      // field: report the last line at or before that point that spells it as a key.
      int line = keyLine(text, u.getPropertyName(), at.getLineNr());
      if (line > 0) {
        where = ":" + line;
      }
    }
    String field = e instanceof JsonMappingException m ? path(m) : "";
    String prefix = where + ": " + (field.isEmpty() ? "" : field + ": ");
    if (e instanceof UnrecognizedPropertyException u) {
      List<String> known = u.getKnownPropertyIds().stream().map(Object::toString).sorted().toList();
      return where + ": unknown field '" + u.getPropertyName() + "'"
          + (field.contains(".") ? " in " + field.substring(0, field.lastIndexOf('.')) : "")
          + "; known fields: " + String.join(", ", known);
    }
    if (e instanceof InvalidFormatException f) {
      return prefix + "'" + f.getValue() + "' is not a " + simpleType(f.getTargetType());
    }
    if (e instanceof MismatchedInputException mi) {
      return prefix + "expected " + simpleType(mi.getTargetType());
    }
    String msg = e.getOriginalMessage();
    return prefix + (msg == null ? "invalid YAML" : msg.lines().findFirst().orElse(msg));
  }

  private static int keyLine(String text, String key, int notAfter) {
    java.util.regex.Pattern p = java.util.regex.Pattern.compile(
        "(^|[\\s{,-])\"?" + java.util.regex.Pattern.quote(key) + "\"?\\s*:");
    String[] lines = text.split("\n", -1);
    int found = -1;
    for (int i = 0; i < lines.length && i < notAfter; i++) {
      if (p.matcher(lines[i]).find()) {
        found = i + 1;
      }
    }
    return found;
  }

  private static String simpleType(Class<?> type) {
    if (type == null) {
      return "different value";
    }
    if (List.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (type == Integer.class || type == int.class) {
      return "whole number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class) {
      return "text value";
    }
    return "mapping of fields";
  }

  private static String path(JsonMappingException e) {
    StringBuilder b = new StringBuilder();
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      } else if (r.getFieldName() != null) {
        if (b.length() > 0) {
          b.append('.');
        }
        b.append(r.getFieldName());
      }
    }
    return b.toString();
  }

  private static List<PoolDefinition> pools(PlanFile file, List<String> errors) {
    List<PoolDefinition> out = new ArrayList<>();
    if (file.pools() == null || file.pools().isEmpty()) {
      errors.add("pools: at least one pool is required");
      return out;
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < file.pools().size(); i++) {
      PlanFile.PoolEntry p = file.pools().get(i);
      String at = "pools[" + i + "]";
      if (p == null || blank(p.name())) {
        errors.add(at + ".name: every pool needs a name");
        continue;
      }
      if (!names.add(p.name())) {
        errors.add(at + ".name: pool name '" + p.name() + "' is used twice");
      }
      if (p.ranges() == null || p.ranges().isEmpty()) {
        errors.add(at + ".ranges: pool '" + p.name() + "' needs at least one CIDR or start-end range");
        continue;
      }
      AllocationStrategy strategy = AllocationStrategy.FIRST_FREE;
      if (p.strategy() != null) {
        try {
          strategy = AllocationStrategy.valueOf(p.strategy().trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
          errors.add(at + ".strategy: '" + p.strategy() + "' is not one of "
              + Arrays.stream(AllocationStrategy.values()).map(Enum::name).collect(Collectors.joining(", ")));
        }
      }
      Duration cooldown = null;
      if (p.cooldown() != null) {
        try {
          cooldown = Duration.parse("PT" + p.cooldown().trim().toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException e) {
          errors.add(at + ".cooldown: '" + p.cooldown() + "' is not a duration such as 30s, 5m or 1h");
        }
      }
      out.add(new PoolDefinition(p.name(), p.ranges(), p.reserved(), strategy, p.group(), cooldown));
    }
    return out;
  }

  private static List<NodeState> nodes(PlanFile file, List<String> errors) {
    List<NodeState> out = new ArrayList<>();
    if (file.nodes() == null) {
      return out;
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < file.nodes().size(); i++) {
      PlanFile.NodeEntry n = file.nodes().get(i);
      String at = "nodes[" + i + "]";
      if (n == null || blank(n.name())) {
        errors.add(at + ".name: every node needs a name");
        continue;
      }
      if (!names.add(n.name())) {
        errors.add(at + ".name: node name '" + n.name() + "' is used twice");
        continue;
      }
      int capacity = n.capacity() == null ? NodeState.UNLIMITED : n.capacity();
      if (capacity < 0) {
        errors.add(at + ".capacity: must be 0 or more, or left out for no limit");
        continue;
      }
      Set<Ip> addresses = new HashSet<>();
      List<String> given = n.addresses() == null ? List.of() : n.addresses();
      for (int k = 0; k < given.size(); k++) {
        Ip ip = address(given.get(k), at + ".addresses[" + k + "]", errors);
        if (ip != null) {
          addresses.add(ip);
        }
      }
      out.add(new NodeState(n.name(), n.group(), n.ready() == null || n.ready(), capacity, addresses));
    }
    return out;
  }

  private static List<Claimant> claimants(PlanFile file, List<String> errors) {
    List<Claimant> out = new ArrayList<>();
    if (file.claimants() == null) {
      return out;
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < file.claimants().size(); i++) {
      PlanFile.ClaimantEntry c = file.claimants().get(i);
      String at = "claimants[" + i + "]";
      if (c == null || blank(c.name())) {
        errors.add(at + ".name: every claimant needs a name");
        continue;
      }
      if (!names.add(c.name())) {
        errors.add(at + ".name: claimant '" + c.name() + "' is listed twice");
        continue;
      }
      if (c.pools() == null || c.pools().isEmpty()) {
        errors.add(at + ".pools: claimant '" + c.name() + "' names no pool");
        continue;
      }
      out.add(new Claimant(c.name(), c.pools()));
    }
    return out;
  }

  private static List<Claim> claims(PlanFile file, List<String> errors) {
    List<Claim> out = new ArrayList<>();
    if (file.claims() == null) {
      return out;
    }
    for (int i = 0; i < file.claims().size(); i++) {
      PlanFile.ClaimEntry c = file.claims().get(i);
      String at = "claims[" + i + "]";
      if (c == null || blank(c.owner())) {
        errors.add(at + ".owner: every claim needs an owner");
        continue;
      }
      Ip ip = address(c.address(), at + ".address", errors);
      Instant when = null;
      if (c.claimedAt() != null) {
        try {
          when = Instant.parse(c.claimedAt().trim());
        } catch (DateTimeParseException e) {
          errors.add(at + ".claimedAt: '" + c.claimedAt() + "' is not a time such as 2026-01-31T12:00:00Z");
        }
      }
      if (ip != null) {
        out.add(new Claim(ip, c.owner(), when));
      }
    }
    return out;
  }

  private static PlacementOptions placement(PlanFile file, List<String> errors) {
    PlanFile.PlacementEntry p = file.placement();
    if (p == null || p.rebalance() == null || !p.rebalance()) {
      return PlacementOptions.DEFAULT;
    }
    int max = p.maxMoves() == null ? 10 : p.maxMoves();
    if (max < 0) {
      errors.add("placement.maxMoves: must be 0 or more");
      return PlacementOptions.DEFAULT;
    }
    return PlacementOptions.rebalance(max);
  }

  private static Ip address(String text, String at, List<String> errors) {
    if (blank(text)) {
      errors.add(at + ": an address is required");
      return null;
    }
    try {
      return Ip.parse(text);
    } catch (InvalidAddressException e) {
      errors.add(at + ": " + e.getMessage());
      return null;
    }
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
