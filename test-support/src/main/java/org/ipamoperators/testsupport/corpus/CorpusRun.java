package org.ipamoperators.testsupport.corpus;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.DynamicTest;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Role;

/**
 * Applies a corpus to the API server and checks what each case expects, with the keys every
 * controller shares:
 * <ul>
 *   <li>{@code admission=rejected}: the API server refuses the object (schema or CEL), nothing is stored;</li>
 *   <li>{@code event=Reason}: a Warning Event with that reason on the object (cluster-scoped objects:
 *       in namespace {@code default}, a Namespace: in itself);</li>
 *   <li>{@code condition=Type:Reason}: the object's {@code status.conditions} has that type with that reason.</li>
 * </ul>
 * {@code ${namespace}} in an entry stands for the run's namespace (a reference such as {@code ns/name}).
 * What "served" means for one controller, and what a bad object must not hold, is the caller's function.
 */
public final class CorpusRun {
  private final KubernetesClient client;
  private final String namespace;
  private final Map<Entry, String> admission = new LinkedHashMap<>();
  private final Map<String, Boolean> scopes = new java.util.concurrent.ConcurrentHashMap<>();

  /** {@code namespace}: where namespaced objects of the corpus without their own namespace go. */
  public CorpusRun(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  /** Creates the entries in order; an admission refusal is kept for {@code admission=rejected}. */
  public void apply(List<Entry> entries) {
    for (Entry e : entries) {
      GenericKubernetesResource o = object(e);
      if (o.getMetadata().getNamespace() == null && namespaced(o)) {
        o.getMetadata().setNamespace(namespace);
      }
      try {
        client.resource(o).create();
      } catch (KubernetesClientException ex) {
        if (e.role() != Role.BAD || !"rejected".equals(e.expect("admission"))) {
          throw new IllegalStateException("could not create " + e + ": " + ex.getMessage(), ex);
        }
        admission.put(e, ex.getCode() + " " + ex.getMessage());
      }
    }
  }

  /** The entry's object, {@code ${namespace}} in its text replaced by the run's namespace. */
  public GenericKubernetesResource object(Entry e) {
    return io.fabric8.kubernetes.client.utils.Serialization.unmarshal(e.yaml().replace("${namespace}", namespace),
        GenericKubernetesResource.class);
  }

  private boolean namespaced(GenericKubernetesResource o) {
    return scopes.computeIfAbsent(o.getApiVersion() + "/" + o.getKind(), k -> client.getApiResources(o.getApiVersion()).getResources().stream()
        .filter(r -> r.getKind().equals(o.getKind()) && !r.getName().contains("/"))
        .findFirst().map(r -> Boolean.TRUE.equals(r.getNamespaced())).orElse(true));
  }

  /** The object of an entry as stored now, or null. */
  public GenericKubernetesResource get(Entry e) {
    GenericKubernetesResource o = object(e);
    boolean ns = namespaced(o);
    var op = client.genericKubernetesResources(o.getApiVersion(), o.getKind());
    String n = o.getMetadata().getNamespace() != null ? o.getMetadata().getNamespace() : namespace;
    return ns ? op.inNamespace(n).withName(o.getMetadata().getName()).get()
        : op.withName(o.getMetadata().getName()).get();
  }

  /** Reasons of the Events recorded on the entry's object. */
  public List<Event> events(Entry e) {
    GenericKubernetesResource o = object(e);
    String ns = "Namespace".equals(o.getKind()) ? o.getMetadata().getName()
        : !namespaced(o) ? "default"
        : o.getMetadata().getNamespace() != null ? o.getMetadata().getNamespace() : namespace;
    return client.v1().events().inNamespace(ns).withField("involvedObject.name", o.getMetadata().getName())
        .list().getItems().stream().filter(ev -> o.getKind().equals(ev.getInvolvedObject().getKind())).toList();
  }

  /** The reason of condition {@code type} in the object's status, or null. */
  @SuppressWarnings("unchecked")
  public static String conditionReason(GenericKubernetesResource o, String type) {
    if (o == null || !(o.getAdditionalProperties().get("status") instanceof Map<?, ?> status)
        || !(status.get("conditions") instanceof List<?> conditions)) {
      return null;
    }
    for (Object c : conditions) {
      Map<String, Object> m = (Map<String, Object>) c;
      if (type.equals(m.get("type"))) {
        return String.valueOf(m.get("reason"));
      }
    }
    return null;
  }

  /**
   * What is wrong with one entry now, or null when it meets its expectations: the shared keys here,
   * {@code served} for the rest: applied to every GOOD and BAD entry, it checks that a good object is
   * served and that a bad one holds nothing, and returns null or what is wrong.
   */
  public String problem(Entry e, Function<Entry, String> served) {
    List<String> out = new ArrayList<>();
    String adm = e.expect("admission");
    if ("rejected".equals(adm)) {
      if (!admission.containsKey(e)) {
        out.add("expected the API server to refuse it, but it was stored");
      }
      return out.isEmpty() ? null : String.join("; ", out);
    }
    String event = e.expect("event");
    if (event != null) {
      List<Event> events = events(e);
      if (events.stream().noneMatch(ev -> event.equals(ev.getReason()))) {
        out.add("no Event " + event + " (has " + events.stream().map(Event::getReason).distinct().toList() + ")");
      }
    }
    String condition = e.expect("condition");
    if (condition != null) {
      String[] tr = condition.split(":", 2);
      String reason = conditionReason(get(e), tr[0]);
      if (!tr[1].equals(reason)) {
        out.add("condition " + tr[0] + " has reason " + reason + ", expected " + tr[1]);
      }
    }
    if (e.role() != Role.SUPPORT) {
      String s = served.apply(e);
      if (s != null) {
        out.add(s);
      }
    }
    return out.isEmpty() ? null : String.join("; ", out);
  }

  /**
   * Waits until every entry meets its expectations or {@code timeout} passes; returns the entries
   * still failing, with what is wrong.
   */
  public Map<Entry, String> await(List<Entry> entries, Function<Entry, String> served, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    Map<Entry, String> failing = new LinkedHashMap<>();
    do {
      failing.clear();
      for (Entry e : entries) {
        if (e.role() == Role.SUPPORT) {
          continue;
        }
        String p;
        try {
          p = problem(e, served);
        } catch (RuntimeException ex) {
          p = "check failed: " + ex;
        }
        if (p != null) {
          failing.put(e, p);
        }
      }
      if (failing.isEmpty()) {
        return failing;
      }
      Thread.sleep(500);
    } while (System.nanoTime() < end);
    return failing;
  }

  /**
   * The run's verdicts as tests: one per bad or good case (failing with its problem, if any), one that no
   * reconcile threw ({@code crashes}: object to exception), one that the corpus holds both bad and good cases.
   */
  public static List<DynamicTest> verdicts(List<Entry> corpus, Map<Entry, String> failing,
      Map<String, String> crashes) {
    List<DynamicTest> tests = new ArrayList<>();
    for (Entry e : corpus) {
      if (e.role() != Role.SUPPORT) {
        String problem = failing.get(e);
        tests.add(DynamicTest.dynamicTest(e.toString(), () -> {
          if (problem != null) {
            throw new AssertionError(e + ": " + problem);
          }
        }));
      }
    }
    Map<String, String> threw = Map.copyOf(crashes);
    tests.add(DynamicTest.dynamicTest("no reconcile threw", () -> {
      if (!threw.isEmpty()) {
        throw new AssertionError("reconciles threw: " + threw);
      }
    }));
    long bad = corpus.stream().filter(e -> e.role() == Role.BAD).count();
    long good = corpus.stream().filter(e -> e.role() == Role.GOOD).count();
    tests.add(DynamicTest.dynamicTest("the corpus has bad and good cases", () -> {
      if (bad <= 10 || good == 0) {
        throw new AssertionError("the corpus has " + bad + " bad and " + good + " good cases");
      }
    }));
    return tests;
  }
}
