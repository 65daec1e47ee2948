#!/usr/bin/env bash
# Runs Neo4j Community (5.26 LTS) in-process for tests and local runs: see README.md.
# The first run resolves Neo4j's jars from Maven Central into ~/.m2 (about 170 MB, under a
# minute here); later runs reuse them and the compiled launcher.
set -euo pipefail
# Paths on the command line are the caller's: this script does not change directory.
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
  echo "neo4j: needs Java 17+ and Maven (apt-get install openjdk-17-jdk-headless maven)" >&2
  exit 1
fi
target=$here/target
if [ ! -s "$target/classpath.txt" ] || [ "$here/pom.xml" -nt "$target/classpath.txt" ] ||
  [ ! -f "$target/classes/kg/neo4j/Pool.class" ] ||
  [ -n "$(find "$here/src" -newer "$target/classpath.txt" -name '*.java')" ]; then
  mvn -q -B -f "$here/pom.xml" compile dependency:build-classpath \
    -Dmdep.outputFile="$target/classpath.txt" >&2
fi
# `run.sh --pool …` serves a pool of servers for the end-to-end tests (Pool.java); anything
# else starts one server (Launcher.java).
main=kg.neo4j.Launcher
# NEO4J_HEAP raises the heap for a large graph (a scale benchmark: e.g. 4g).
jvm=(-XX:+UseSerialGC -Xms256m "-Xmx${NEO4J_HEAP:-1g}")
if [ "${1:-}" = --pool ]; then
  shift
  main=kg.neo4j.Pool
  # Several servers share the heap; G1's short pauses, because a pause stops every server
  # at once (the serial collector's full collections took 280 ms each, against tests whose
  # chunks time out after 1 s).
  jvm=(-XX:+UseG1GC -XX:MaxGCPauseMillis=50 -Xms512m -Xmx3g)
fi
exec java "${jvm[@]}" -cp "$target/classes:$(cat "$target/classpath.txt")" "$main" "$@"
