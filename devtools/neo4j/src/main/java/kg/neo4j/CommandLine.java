package kg.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** What the launcher and the pool read from their command lines and environment alike. */
final class CommandLine {
  private CommandLine() {}

  /** The flags given, each with its value; `--until-stdin-closes` alone takes none. */
  record Parsed(Map<String, String> values, boolean untilStdinCloses) {
    String value(String flag) {
      return values.get(flag);
    }
  }

  /** Reads `args`, refusing a flag not in `valued` or one without its value. */
  static Parsed parse(String[] args, Set<String> valued) {
    Map<String, String> values = new HashMap<>();
    boolean untilStdinCloses = false;
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--until-stdin-closes")) {
        untilStdinCloses = true;
        continue;
      }
      if (!valued.contains(flag)) {
        throw new IllegalArgumentException("unknown option " + flag);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(flag + " needs a value");
      }
      values.put(flag, args[++i]);
    }
    return new Parsed(values, untilStdinCloses);
  }

  /** `NEO4J_PASSWORD`, which Neo4j 5 takes only from 8 characters on. */
  static String password() {
    String password = System.getenv("NEO4J_PASSWORD");
    if (password == null || password.length() < 8) {
      throw new IllegalArgumentException(
          "set NEO4J_PASSWORD (Neo4j 5 refuses passwords under 8 characters)");
    }
    return password;
  }

  /** The script at `value`, if one was given; it must be readable. */
  static Path script(String value) {
    if (value == null) {
      return null;
    }
    Path script = Path.of(value);
    if (!Files.isReadable(script)) {
      throw new IllegalArgumentException("cannot read " + script);
    }
    return script;
  }

  /** `value` as a whole number from `low` to `high`, or why not. */
  static int number(String flag, String value, int fallback, int low, int high, String what) {
    if (value == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(value);
      if (n < low || n > high) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes " + what + ", not " + value);
    }
  }
}
