#!/usr/bin/env bash
# Runs Neo4j Community (5.26 LTS) in-process for tests and local runs: see README.md.
# The first run resolves Neo4j's jars from Maven Central into ~/.m2 (about 170 MB, under a
# minute here); later runs reuse them and the compiled launcher.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
  echo "neo4j: needs Java 17+ and Maven (apt-get install openjdk-17-jdk-headless maven)" >&2
  exit 1
fi
if [ ! -s target/classpath.txt ] || [ pom.xml -nt target/classpath.txt ] ||
  [ ! -f target/classes/kg/neo4j/Launcher.class ] ||
  [ src/main/java/kg/neo4j/Launcher.java -nt target/classes/kg/neo4j/Launcher.class ]; then
  mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >&2
fi
exec java -XX:+UseSerialGC -Xms256m -Xmx1g -cp "target/classes:$(cat target/classpath.txt)" \
  kg.neo4j.Launcher "$@"
