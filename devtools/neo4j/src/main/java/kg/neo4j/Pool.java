package kg.neo4j;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;
import org.neo4j.io.ByteUnit;
import org.neo4j.io.fs.FileUtils;

/**
 * A pool of real Neo4j servers for kg-agent's end-to-end tests, in one JVM: each test leases
 * a server of its own (the demo dataset or an empty graph) and the server is stopped and
 * deleted when the test lets go. Neo4j Community has one user database per server, so a
 * private server is the only way for tests that write to run side by side; starting one in
 * a JVM that has already started several is a matter of a second or two, where a JVM of its
 * own takes half a minute here.
 *
 * <p>Each kind's data is made once, at start, in a template server (the dataset loaded in one
 * transaction, the {@code neo4j} user's password set); every leased server starts on a copy
 * of that template's folder. A few servers of each kind are kept started ahead of demand.
 *
 * <p>The lease protocol, on a TCP port on 127.0.0.1: the client sends one line, {@code demo}
 * or {@code empty}; the pool answers one line, {@code ready http://127.0.0.1:P bolt://…} (or
 * {@code error …}), and the server is the client's until its connection closes, for whatever
 * reason (a test's end, a panic, a killed process).
 */
public final class Pool {
  private Pool() {}

  enum Kind {
    DEMO,
    EMPTY
  }

  private final Map<Kind, Path> templates = new java.util.EnumMap<>(Kind.class);
  private final Map<Kind, LinkedBlockingQueue<Neo4j>> spares = new java.util.EnumMap<>(Kind.class);
  // One thread starts servers: on two cores, two starting at once take longer each than
  // one after the other, and a waiting lease would get neither sooner.
  private final ExecutorService starter = Executors.newSingleThreadExecutor(daemon("neo4j-start"));
  private final ExecutorService stopper = Executors.newSingleThreadExecutor(daemon("neo4j-stop"));
  private final java.util.Set<Neo4j> live = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private Path root;
  private String password;
  private int sparesPerKind;

  public static void main(String[] args) throws Exception {
    PoolOptions options;
    try {
      options = PoolOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("neo4j pool: " + e.getMessage());
      System.err.println(PoolOptions.USAGE);
      System.exit(2);
      return;
    }
    new Pool().run(options);
  }

  private void run(PoolOptions options) throws Exception {
    long started = System.nanoTime();
    root = Files.createTempDirectory("kg-neo4j-pool");
    password = options.password;
    sparesPerKind = options.spares;
    Runtime.getRuntime().addShutdownHook(new Thread(this::shutdown, "neo4j-pool-stop"));
    int statements = cachedTemplate(Kind.DEMO, options.cypher);
    log("demo template ready", started);
    cachedTemplate(Kind.EMPTY, null);
    log("empty template ready", started);
    for (Kind kind : Kind.values()) {
      spares.put(kind, new LinkedBlockingQueue<>());
      for (int i = 0; i < sparesPerKind; i++) {
        refill(kind);
      }
    }
    ServerSocket control = new ServerSocket(options.port, 50, InetAddress.getLoopbackAddress());
    // The first spare's start, so the line below means a lease is served at once.
    Neo4j first = spares.get(Kind.DEMO).take();
    spares.get(Kind.DEMO).put(first);
    System.out.printf(
        "neo4j pool: listening on 127.0.0.1:%d, Neo4j %s, demo template %d statements, ready in %d ms%n",
        control.getLocalPort(),
        org.neo4j.kernel.internal.Version.getNeo4jVersion(),
        statements,
        (System.nanoTime() - started) / 1_000_000);
    System.out.flush();
    if (options.untilStdinCloses) {
      Thread watcher =
          new Thread(
              () -> {
                try {
                  while (System.in.read() != -1) {
                    // Input is ignored: its end means the process that started this is gone.
                  }
                } catch (IOException e) {
                  // Same: the parent is gone.
                }
                System.exit(0);
              },
              "neo4j-pool-stdin");
      watcher.setDaemon(true);
      watcher.start();
    }
    while (true) {
      Socket client = control.accept();
      Thread lease = new Thread(() -> serve(client), "neo4j-lease");
      lease.setDaemon(true);
      lease.start();
    }
  }

  /** One lease: a line in, a server's address out, the server stopped when the client goes. */
  private void serve(Socket client) {
    Neo4j neo4j = null;
    try (client) {
      BufferedReader in =
          new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
      OutputStream out = client.getOutputStream();
      String line = in.readLine();
      Kind kind =
          switch (line == null ? "" : line.strip()) {
            case "demo" -> Kind.DEMO;
            case "empty" -> Kind.EMPTY;
            default -> null;
          };
      if (kind == null) {
        out.write(("error: send `demo` or `empty`, not `" + line + "`\n").getBytes(StandardCharsets.UTF_8));
        return;
      }
      long asked = System.nanoTime();
      neo4j = spares.get(kind).take();
      refill(kind);
      String ready =
          String.format(
              "ready %s %s in %d ms%n",
              strip(neo4j.httpURI().toString()),
              neo4j.boltURI(),
              (System.nanoTime() - asked) / 1_000_000);
      out.write(ready.getBytes(StandardCharsets.UTF_8));
      out.flush();
      while (client.getInputStream().read() != -1) {
        // Nothing else is expected; the end of input is the end of the lease.
      }
    } catch (IOException e) {
      // The client is gone: same as the end of its lease.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      System.err.println("neo4j pool: a lease failed: " + e);
    } finally {
      if (neo4j != null) {
        Neo4j done = neo4j;
        stopper.execute(() -> stop(done));
      }
    }
  }

  private static void log(String what, long since) {
    System.err.printf("neo4j pool: %s at %d ms%n", what, (System.nanoTime() - since) / 1_000_000);
  }

  private static String strip(String uri) {
    return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
  }

  private void refill(Kind kind) {
    starter.execute(
        () -> {
          try {
            long begun = System.nanoTime();
            spares.get(kind).put(start(templates.get(kind)));
            log("a " + kind + " server started", begun);
          } catch (RuntimeException e) {
            System.err.println("neo4j pool: starting a " + kind + " server failed: " + e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
  }

  /**
   * A kind's template from the cache ({@code KG_NEO4J_CACHE}, else
   * {@code ~/.cache/kg-agent/neo4j-templates}), keyed by Neo4j's version, the kind, the
   * password and the script; made and cached when absent. A cached template turns the
   * pool's start from about 40 s into about 12 s here (the script's 1,543 statements take
   * 18 s to load); like Maven's {@code ~/.m2}, it survives a fresh clone.
   */
  private int cachedTemplate(Kind kind, Path cypher) throws IOException {
    Path home = root.resolve("template-" + kind.name().toLowerCase(java.util.Locale.ROOT));
    Path cached = cacheEntry(kind, cypher);
    if (cached != null && Files.isRegularFile(cached.resolve("statements"))) {
      FileUtils.copyDirectory(cached.resolve("home"), home);
      templates.put(kind, home);
      return Integer.parseInt(Files.readString(cached.resolve("statements")).strip());
    }
    int statements = template(kind, cypher);
    if (cached != null) {
      try {
        Files.createDirectories(cached.getParent());
        Path partial = Files.createTempDirectory(cached.getParent(), ".partial-");
        FileUtils.copyDirectory(home, partial.resolve("home"));
        Files.writeString(partial.resolve("statements"), Integer.toString(statements));
        Files.move(partial, cached, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        // Another pool cached it first, or the cache is not writable: this run needs none.
        System.err.println("neo4j pool: template not cached (" + e + ")");
      }
    }
    return statements;
  }

  private Path cacheEntry(Kind kind, Path cypher) throws IOException {
    String dir = System.getenv("KG_NEO4J_CACHE");
    if (dir == null || dir.isBlank()) {
      String home = System.getProperty("user.home");
      if (home == null) {
        return null;
      }
      dir = Path.of(home, ".cache", "kg-agent", "neo4j-templates").toString();
    }
    java.security.MessageDigest sha;
    try {
      sha = java.security.MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      return null;
    }
    sha.update(org.neo4j.kernel.internal.Version.getNeo4jVersion().getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    sha.update(kind.name().getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    sha.update(password.getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    if (cypher != null) {
      sha.update(Files.readAllBytes(cypher));
    }
    String key = java.util.HexFormat.of().formatHex(sha.digest()).substring(0, 24);
    return Path.of(dir, key);
  }

  /** Makes a kind's template: a server started, loaded, and stopped with its folder kept. */
  private int template(Kind kind, Path cypher) throws IOException {
    Path home = root.resolve("template-" + kind.name().toLowerCase(java.util.Locale.ROOT));
    long building = System.nanoTime();
    Neo4j neo4j = builder(root.resolve("work")).build();
    log("template server started", building);
    Path folder = neo4j.config().get(GraphDatabaseSettings.neo4j_home);
    int statements = 0;
    try {
      neo4j
          .databaseManagementService()
          .database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
          .executeTransactionally(
              "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
              Map.of("password", password));
      long loading = System.nanoTime();
      if (cypher != null) {
        statements = Launcher.load(neo4j.defaultDatabaseService(), cypher);
        log(statements + " statements loaded", loading);
      }
      // Stop the databases, copy the folder, then let the harness delete its own.
      long stopping = System.nanoTime();
      neo4j.databaseManagementService().shutdown();
      log("shut down", stopping);
      FileUtils.copyDirectory(folder, home);
      log("copied", stopping);
    } finally {
      long closing = System.nanoTime();
      neo4j.close();
      log("closed", closing);
    }
    templates.put(kind, home);
    return statements;
  }

  private Neo4j start(Path template) {
    Neo4j neo4j = builder(root.resolve("work")).copyFrom(template).build();
    live.add(neo4j);
    return neo4j;
  }

  private void stop(Neo4j neo4j) {
    live.remove(neo4j);
    try {
      neo4j.close();
    } catch (RuntimeException e) {
      System.err.println("neo4j pool: stopping a server failed: " + e);
    }
  }

  private static org.neo4j.harness.Neo4jBuilder builder(Path work) {
    return Neo4jBuilders.newInProcessBuilder(work)
        .withConfig(HttpConnector.enabled, true)
        .withConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", 0))
        .withConfig(BoltConnector.enabled, true)
        .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", 0))
        .withConfig(GraphDatabaseSettings.auth_enabled, true)
        // Several servers share one JVM: a small page cache each (the demo store is ~2 MB).
        .withConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(32))
        // A transaction's memory is limited as devgraph limits a query's (256 MiB, its
        // default): a resource bomb fails with Neo4j's memory error on both graphs.
        .withConfig(GraphDatabaseSettings.memory_transaction_max_size, ByteUnit.mebiBytes(256))
        // A server whose lease ended stops at once: Bolt otherwise waits for its thread pool
        // and connections to wind down (every shutdown took 10.4 s), and the only Bolt
        // client, the Query API's own, has nothing left to say.
        .withConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ZERO)
        .withConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ZERO)
        .withConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofMillis(200));
  }

  private void shutdown() {
    for (Neo4j neo4j : live) {
      stop(neo4j);
    }
    try {
      if (root != null) {
        FileUtils.deleteDirectory(root);
      }
    } catch (IOException e) {
      System.err.println("neo4j pool: could not delete " + root + ": " + e);
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }

  /** The command line. */
  static final class PoolOptions {
    static final String USAGE =
        "usage: pool [--port N] [--spares N] [--cypher FILE] [--until-stdin-closes]"
            + " (password in NEO4J_PASSWORD, 8+ characters)";

    int port;
    int spares;
    Path cypher;
    String password;
    boolean untilStdinCloses;

    static PoolOptions parse(String[] args) {
      CommandLine.Parsed parsed =
          CommandLine.parse(args, java.util.Set.of("--port", "--spares", "--cypher"));
      PoolOptions options = new PoolOptions();
      options.port = Launcher.Options.port("--port", parsed.value("--port"));
      options.spares =
          CommandLine.number("--spares", parsed.value("--spares"), 2, 1, 16, "a number from 1 to 16");
      options.cypher = CommandLine.script(parsed.value("--cypher"));
      options.untilStdinCloses = parsed.untilStdinCloses();
      options.password = CommandLine.password();
      return options;
    }
  }
}
