package kg.neo4j;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.io.ByteUnit;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts Neo4j Community in this process (the server's own test harness), for kg-agent's
 * tests and local runs: HTTP (with the Query API v2) and Bolt on 127.0.0.1 only, basic auth
 * on, the {@code neo4j} user's password set (no change required), and optionally a Cypher
 * script loaded. Prints one line, {@code neo4j: listening on http://127.0.0.1:PORT ...},
 * once it answers, and stops on SIGTERM or, with {@code --until-stdin-closes}, when its
 * standard input closes (the test that started it went away, even by SIGKILL); its data
 * lives in a temporary directory deleted on stop.
 *
 * <p>Bolt is on because Neo4j 5's Query API runs its statements through an internal Bolt
 * connection: with Bolt off every query answers "Unable to connect to http-driver.com:0".
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("neo4j launcher: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(2);
      return;
    }
    long started = System.nanoTime();
    var builder =
        Neo4jBuilders.newInProcessBuilder()
            .withConfig(HttpConnector.enabled, true)
            .withConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", options.httpPort))
            .withConfig(BoltConnector.enabled, true)
            .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", options.boltPort))
            .withConfig(GraphDatabaseSettings.auth_enabled, true);
    if (options.pageCacheMb > 0) {
      // Sized for the graph (a scale benchmark's millions of nodes); Neo4j's own default
      // when not given.
      builder =
          builder.withConfig(
              GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(options.pageCacheMb));
    }
    Neo4j neo4j = builder.build();
    Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close, "neo4j-stop"));
    neo4j
        .databaseManagementService()
        .database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
        .executeTransactionally(
            "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
            Map.of("password", options.password));
    int statements = 0;
    if (options.cypher != null) {
      statements = load(neo4j.defaultDatabaseService(), options.cypher);
    }
    long ms = (System.nanoTime() - started) / 1_000_000;
    System.out.printf(
        "neo4j: listening on http://127.0.0.1:%d (bolt 127.0.0.1:%d), Neo4j %s, %d statements loaded, in %d ms%n",
        neo4j.httpURI().getPort(),
        neo4j.boltURI().getPort(),
        org.neo4j.kernel.internal.Version.getNeo4jVersion(),
        statements,
        ms);
    System.out.flush();
    if (options.untilStdinCloses) {
      while (System.in.read() != -1) {
        // Input is ignored: its end means the process that started this is gone.
      }
      System.exit(0);
    }
    Thread.currentThread().join();
  }

  /**
   * Runs a script in one transaction: one commit instead of one per statement (the demo
   * dataset's 1,543 statements took 94 s as single transactions, 18 s as one). Returns how
   * many statements ran.
   */
  static int load(GraphDatabaseService db, Path script) throws IOException {
    List<String> statements = statements(script);
    try (Transaction tx = db.beginTx()) {
      for (String statement : statements) {
        tx.execute(statement).close();
      }
      tx.commit();
    }
    return statements.size();
  }

  /** A script's statements: separated by a `;` at the end of a line; `//` lines are comments. */
  static List<String> statements(Path script) throws IOException {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : Files.readAllLines(script, StandardCharsets.UTF_8)) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("//")) {
        continue;
      }
      current.append(line).append('\n');
      if (trimmed.endsWith(";")) {
        String statement = current.toString().strip();
        statements.add(statement.substring(0, statement.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      statements.add(current.toString().strip());
    }
    return statements;
  }

  /** The command line. */
  static final class Options {
    static final String USAGE =
        "usage: launcher [--http-port N] [--bolt-port N] [--cypher FILE] [--page-cache-mb N]"
            + " [--until-stdin-closes]"
            + " (password in NEO4J_PASSWORD, 8+ characters)";

    int httpPort;
    int boltPort;
    int pageCacheMb;
    Path cypher;
    String password;
    boolean untilStdinCloses;

    static Options parse(String[] args) {
      CommandLine.Parsed parsed =
          CommandLine.parse(
              args, java.util.Set.of("--http-port", "--bolt-port", "--cypher", "--page-cache-mb"));
      Options options = new Options();
      options.httpPort = port("--http-port", parsed.value("--http-port"));
      options.boltPort = port("--bolt-port", parsed.value("--bolt-port"));
      options.cypher = CommandLine.script(parsed.value("--cypher"));
      options.pageCacheMb =
          CommandLine.number(
              "--page-cache-mb", parsed.value("--page-cache-mb"), 0, 0, 1 << 20, "mebibytes");
      options.untilStdinCloses = parsed.untilStdinCloses();
      options.password = CommandLine.password();
      return options;
    }

    /** A port (0, the default, picks a free one). */
    static int port(String flag, String value) {
      return CommandLine.number(flag, value, 0, 0, 65535, "a port (0 to 65535)");
    }
  }
}
