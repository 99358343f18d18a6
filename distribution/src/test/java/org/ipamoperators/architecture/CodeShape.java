package org.ipamoperators.architecture;

import com.github.javaparser.JavaParser;
import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.ParserConfiguration.LanguageLevel;
import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.body.CallableDeclaration;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.CompactConstructorDeclaration;
import com.github.javaparser.ast.body.FieldDeclaration;
import com.github.javaparser.ast.body.VariableDeclarator;
import com.github.javaparser.ast.expr.ArrayCreationExpr;
import com.github.javaparser.ast.expr.ArrayInitializerExpr;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.expr.MethodCallExpr;
import com.github.javaparser.ast.expr.ObjectCreationExpr;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The shape the developers' guide asks of main code, read from one source file's syntax tree: how long each method
 * is, whether a static field holds mutable state, and whether a pure package imports an I/O library.
 */
final class CodeShape {
  static final int MAX_METHOD_LINES = 60;
  static final int MAX_RECONCILER_LINES = 450;

  /** Types whose instances change after construction: a static field holding one is process-wide mutable state. */
  private static final Set<String> MUTABLE_TYPES = Set.of("HashMap", "LinkedHashMap", "TreeMap", "WeakHashMap",
      "IdentityHashMap", "EnumMap", "ConcurrentHashMap", "ConcurrentSkipListMap", "HashSet", "LinkedHashSet",
      "TreeSet", "ConcurrentSkipListSet", "CopyOnWriteArraySet", "ArrayList", "LinkedList", "CopyOnWriteArrayList",
      "ArrayDeque", "ConcurrentLinkedQueue", "ConcurrentLinkedDeque", "LinkedBlockingQueue", "AtomicInteger",
      "AtomicLong", "AtomicBoolean", "AtomicReference", "LongAdder", "StringBuilder", "BitSet");
  /** Factory calls that return a mutable collection. */
  private static final Set<String> MUTABLE_FACTORIES = Set.of("newKeySet", "synchronizedMap", "synchronizedSet",
      "synchronizedList", "newSetFromMap");
  /**
   * Libraries a decision package (plan/, config/, ipam-core) must not reach: the I/O happens at the edges. Plain
   * data types (fabric8's and the clouds' {@code model} packages) are values, and allowed.
   */
  private static final List<String> IO_PACKAGES = List.of("io.fabric8.kubernetes.client.",
      "io.fabric8.openshift.client.", "io.javaoperatorsdk.", "software.amazon.", "com.azure.", "okhttp3.",
      "io.vertx.", "java.net.http.", "java.net.Socket", "java.nio.file.");

  record Method(String file, String name, int line, int lines) {}

  private final String file;
  private final CompilationUnit unit;

  private CodeShape(String file, CompilationUnit unit) {
    this.file = file;
    this.unit = unit;
  }

  static CodeShape parse(String file, String source) {
    JavaParser parser = new JavaParser(new ParserConfiguration().setLanguageLevel(LanguageLevel.JAVA_17));
    CompilationUnit unit = parser.parse(source).getResult()
        .orElseThrow(() -> new IllegalArgumentException(file + " does not parse"));
    return new CodeShape(file, unit);
  }

  /** Every method and constructor (compact ones included) with its length in lines, annotations included. */
  List<Method> methods() {
    List<Method> out = new ArrayList<>();
    for (CallableDeclaration<?> c : unit.findAll(CallableDeclaration.class)) {
      out.add(method(c, c.getNameAsString()));
    }
    for (CompactConstructorDeclaration c : unit.findAll(CompactConstructorDeclaration.class)) {
      out.add(method(c, c.getNameAsString()));
    }
    return out;
  }

  private Method method(Node n, String name) {
    var range = n.getRange().orElseThrow();
    return new Method(file, name, range.begin.line, range.end.line - range.begin.line + 1);
  }

  /** Whether the file declares a reconciler: a top-level class named so or implementing Reconciler. */
  boolean isReconciler() {
    return unit.getTypes().stream().filter(t -> t instanceof ClassOrInterfaceDeclaration)
        .map(t -> (ClassOrInterfaceDeclaration) t)
        .anyMatch(c -> c.getNameAsString().endsWith("Reconciler")
            || c.getImplementedTypes().stream().anyMatch(t -> t.getNameAsString().equals("Reconciler")));
  }

  String file() {
    return file;
  }

  int lines() {
    return unit.getRange().map(r -> r.end.line).orElse(0);
  }

  /** Static fields that are not final, or final ones initialised with a mutable collection, atomic or array. */
  List<String> staticMutableState() {
    List<String> out = new ArrayList<>();
    for (FieldDeclaration f : unit.findAll(FieldDeclaration.class)) {
      if (!f.isStatic() || isInterfaceConstant(f)) {
        continue;
      }
      for (VariableDeclarator v : f.getVariables()) {
        Optional<Expression> init = v.getInitializer();
        if (!f.isFinal()) {
          out.add(where(v) + " is static and not final");
        } else if (init.isPresent() && mutable(init.get())) {
          out.add(where(v) + " is a static " + init.get().toString().replaceAll("\\s+", " "));
        }
      }
    }
    return out;
  }

  private static boolean isInterfaceConstant(FieldDeclaration f) {
    return f.getParentNode().filter(p -> p instanceof ClassOrInterfaceDeclaration c && c.isInterface()).isPresent();
  }

  private static boolean mutable(Expression e) {
    if (e instanceof ObjectCreationExpr o) {
      return MUTABLE_TYPES.contains(o.getType().getNameAsString());
    }
    if (e instanceof MethodCallExpr m) {
      return MUTABLE_FACTORIES.contains(m.getNameAsString());
    }
    return e instanceof ArrayCreationExpr || e instanceof ArrayInitializerExpr;
  }

  private String where(VariableDeclarator v) {
    return file + ":" + v.getRange().map(r -> r.begin.line).orElse(0) + " " + v.getNameAsString();
  }

  /** Imports of an I/O library. */
  List<String> ioImports() {
    return unit.getImports().stream().map(i -> i.getNameAsString())
        .filter(n -> IO_PACKAGES.stream().anyMatch(n::startsWith) && !n.contains(".model."))
        .map(n -> file + " imports " + n).toList();
  }

  String packageName() {
    return unit.getPackageDeclaration().map(p -> p.getNameAsString()).orElse("");
  }
}
