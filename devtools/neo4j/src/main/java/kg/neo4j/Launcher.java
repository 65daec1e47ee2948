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
    Neo4j neo4j =
        Neo4jBuilders.newInProcessBuilder()
            .withConfig(HttpConnector.enabled, true)
            .withConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", options.httpPort))
            .withConfig(BoltConnector.enabled, true)
            .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", options.boltPort))
            .withConfig(GraphDatabaseSettings.auth_enabled, true)
            .build();
    Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close, "neo4j-stop"));
    neo4j
        .databaseManagementService()
        .database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
        .executeTransactionally(
            "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
            Map.of("password", options.password));
    int statements = 0;
    if (options.cypher != null) {
      // One transaction for the whole script: one commit instead of one per statement
      // (1,543 statements of the demo dataset: 94 s as single transactions).
      try (Transaction tx = neo4j.defaultDatabaseService().beginTx()) {
        for (String statement : statements(options.cypher)) {
          tx.execute(statement).close();
          statements++;
        }
        tx.commit();
      }
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
        "usage: launcher [--http-port N] [--bolt-port N] [--cypher FILE] [--until-stdin-closes]"
            + " (password in NEO4J_PASSWORD, 8+ characters)";

    int httpPort = 0;
    int boltPort = 0;
    Path cypher;
    String password;
    boolean untilStdinCloses;

    static Options parse(String[] args) {
      Options options = new Options();
      for (int i = 0; i < args.length; i++) {
        String flag = args[i];
        if (flag.equals("--until-stdin-closes")) {
          options.untilStdinCloses = true;
          continue;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(flag + " needs a value");
        }
        String value = args[++i];
        switch (flag) {
          case "--http-port" -> options.httpPort = port(flag, value);
          case "--bolt-port" -> options.boltPort = port(flag, value);
          case "--cypher" -> options.cypher = Path.of(value);
          default -> throw new IllegalArgumentException("unknown option " + flag);
        }
      }
      options.password = System.getenv("NEO4J_PASSWORD");
      if (options.password == null || options.password.length() < 8) {
        throw new IllegalArgumentException(
            "set NEO4J_PASSWORD (Neo4j 5 refuses passwords under 8 characters)");
      }
      if (options.cypher != null && !Files.isReadable(options.cypher)) {
        throw new IllegalArgumentException("cannot read " + options.cypher);
      }
      return options;
    }

    static int port(String flag, String value) {
      try {
        int port = Integer.parseInt(value);
        if (port < 0 || port > 65535) {
          throw new NumberFormatException();
        }
        return port;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(flag + " takes a port (0 to 65535), not " + value);
      }
    }
  }
}
