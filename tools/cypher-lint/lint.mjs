#!/usr/bin/env node
// The Cypher lint gate (issue #15): every statement kg-agent can send, checked by Neo4j's own
// Cypher front end (`@neo4j-cypher/language-support`: Neo4j's ANTLR grammar plus its semantic
// analysis compiled to JavaScript, the same code that reports errors and notifications in
// Neo4j's tools).
//
//   node tools/cypher-lint/lint.mjs [--self-test] SOURCE...
//
// A SOURCE is a JSON-lines file (each line a JSON string, or an object with a `statement`),
// or a folder, read as every `statements-*.jsonl` in it (devgraph's capture files, see
// devtools/devgraph/src/capture.rs). Each statement is checked under `CYPHER 5` (what Neo4j
// 5.x and 2025.x databases run by default) and `CYPHER 25` (what 2025.06+ and Aura can be set
// to), or only under the version it names itself (`CYPHER 25 MATCH …`).
//
// What fails the gate (exit 1), and why:
// - every error the parser or the semantic analysis reports: invalid syntax, undefined
//   variables, wrong clause order, a function or procedure Neo4j does not have, more than
//   one statement in one text (the Query API runs one). The schema is left out on purpose
//   (no labels, relationship types or property keys), so nothing is reported for names
//   the live graph decides; the one schema-like error the library raises without one,
//   "Parameter $x is not defined.", is dropped: parameters come with each request.
//   Functions and procedures are checked against the library's own dump of a Neo4j
//   catalogue (`testData.mockSchema`: Neo4j's built-ins, APOC and GDS, per Cypher version),
//   which also gives their deprecations and the signatures the semantic analysis uses.
// - every deprecation (a deprecated syntax, function or procedure): each is removed or
//   changed by a later Neo4j, so it is an error that has not happened yet;
// - every other warning Neo4j's semantic analysis reports (e.g. a subquery variable that
//   shadows an outer one): these are Neo4j's own notifications, and an application
//   statement should send none.
// An empty source fails too (a capture that recorded nothing must not pass as "clean"), and
// every run starts with a self-test proving the parser still flags a known deprecation and
// a known syntax error, and accepts the fixed forms, so the gate cannot pass everything by
// accident. Exit 2: bad usage or unreadable input.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import {
  lintCypherQuery,
  isNotParamError,
  testData,
} from '@neo4j-cypher/language-support';

const VERSIONS = ['CYPHER 5', 'CYPHER 25'];
const SEVERITY_ERROR = 1;
const SEVERITY_WARNING = 2;
const TAG_DEPRECATED = 2;

// Neo4j's catalogue of functions and procedures only (see the header): no labels,
// relationship types, property keys or parameters. Narrowed by `useCatalogue` to the
// entries whose names occur in the texts being checked: the library compares the whole
// registry (JSON.stringify, ~1 MB) on every call, a third of its time with the whole
// catalogue. A name that occurs nowhere cannot be called; a call of a function or procedure
// Neo4j does not have is still reported (it is in no registry).
let SCHEMA = { functions: {}, procedures: {} };

/** Narrows the catalogue to what `statements` can name (see above). */
export function useCatalogue(statements) {
  const corpus = statements.join('\n').replace(/[\s`]+/g, '').toLowerCase();
  const narrow = (registry) =>
    Object.fromEntries(
      Object.entries(registry).map(([version, entries]) => [
        version,
        Object.fromEntries(
          Object.entries(entries).filter(([name]) => corpus.includes(name.toLowerCase())),
        ),
      ]),
    );
  SCHEMA = {
    functions: narrow(testData.mockSchema.functions),
    procedures: narrow(testData.mockSchema.procedures),
  };
}

/** The findings for one statement: [{version, kind: error|deprecation|warning, message, at}]. */
export function check(statement) {
  const named = /^\s*CYPHER\s+(5|25)\b/i.exec(statement);
  const versions = named ? [null] : VERSIONS;
  const findings = [];
  for (const version of versions) {
    const text = version ? `${version} ${statement}` : statement;
    const shift = version ? version.length + 1 : 0;
    const { diagnostics, symbolTables } = lintCypherQuery(text, SCHEMA, {
      consoleCommandsEnabled: false,
    });
    const label = version ?? `CYPHER ${named[1]}`;
    if (symbolTables.length > 1) {
      findings.push({
        version: label,
        kind: 'error',
        message: `${symbolTables.length} statements in one text (the Query API runs one)`,
        at: 0,
      });
    }
    for (const d of diagnostics) {
      if (!isNotParamError(d)) continue;
      const deprecated =
        (d.tags ?? []).includes(TAG_DEPRECATED) || /deprecat/i.test(d.message);
      const kind =
        d.severity === SEVERITY_ERROR
          ? 'error'
          : deprecated
            ? 'deprecation'
            : d.severity === SEVERITY_WARNING
              ? 'warning'
              : null;
      if (!kind) continue; // information and hints
      findings.push({
        version: label,
        kind,
        message: d.message,
        at: Math.max(0, (d.offsets?.start ?? shift) - shift),
      });
    }
  }
  // The same finding under both versions is reported once, naming both.
  const merged = new Map();
  for (const f of findings) {
    const key = `${f.kind}\u0000${f.message}\u0000${f.at}`;
    const seen = merged.get(key);
    if (seen) seen.version += `, ${f.version}`;
    else merged.set(key, { ...f });
  }
  return [...merged.values()];
}

// What the self-test expects (see the header): a finding of this kind, or none (null).
const SELF_TEST = [
  // Neo4j 5.23+ deprecates CALL subqueries without a variable scope clause.
  ['UNWIND [1] AS x CALL { WITH x RETURN x AS y } RETURN y', 'deprecation'],
  ['UNWIND [1] AS x CALL (x) { RETURN x AS y } RETURN y', null],
  ['MATCH (n) RETURN id(n) AS id', 'deprecation'],
  ["CALL db.index.vector.createNodeIndex('i', 'Chunk', 'embedding', 8, 'cosine')", 'deprecation'],
  ['MATCH (n) WHERE n.x = = 1 RETURN n', 'error'],
  ['MATCH (n) RETURN n.x AS x, x + 1 AS y', 'error'],
  ['MATCH (n) RETURN n; MATCH (m) RETURN m', 'error'],
  ['RETURN nosuchfunction(1) AS x', 'error'],
  ['CALL db.labels() YIELD nope RETURN nope', 'error'],
  ['MATCH (o:PurchaseOrder {id: $id}) WHERE o.total > $min RETURN elementId(o) AS id', null],
  ['CALL db.labels() YIELD label RETURN label', null],
];

/** Proves the parser flags what it must and accepts the fixed forms. */
export function selfTest() {
  const failures = [];
  for (const [statement, expected] of SELF_TEST) {
    const kinds = new Set(check(statement).map((f) => f.kind));
    const ok = expected ? kinds.has(expected) : kinds.size === 0;
    if (!ok) {
      failures.push(
        `self-test: expected ${expected ?? 'no finding'} for: ${statement} (got: ${[...kinds].join(', ') || 'none'})`,
      );
    }
  }
  return { cases: SELF_TEST.length, failures };
}

function readSource(path) {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => /^statements-.*\.jsonl$/.test(f))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const statements = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!line.trim()) return;
        let value;
        try {
          value = JSON.parse(line);
        } catch (e) {
          throw new Error(`${file}:${i + 1}: not JSON: ${e.message}`);
        }
        const statement = typeof value === 'string' ? value : value?.statement;
        if (typeof statement !== 'string') {
          throw new Error(`${file}:${i + 1}: neither a string nor {"statement": …}`);
        }
        statements.push(statement);
      });
  }
  return { files: files.length, statements };
}

function excerpt(statement, at) {
  const lines = statement.split('\n');
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    if (at <= offset + lines[i].length) {
      return `line ${i + 1}, column ${at - offset + 1}`;
    }
    offset += lines[i].length + 1;
  }
  return `offset ${at}`;
}

/**
 * Checks `statements` on worker threads (one per core, at most 4: Neo4j's semantic analysis
 * costs ~0.1 s of CPU per statement and version); the first also runs the self-test.
 * Returns {test, findings: Map(statement -> findings)}.
 */
async function checkAll(statements, catalogue) {
  const workers = Math.max(1, Math.min(availableParallelism(), 4, Math.ceil(statements.length / 8)));
  const chunks = Array.from({ length: workers }, (_, i) =>
    statements.filter((_, j) => j % workers === i),
  );
  const answers = await Promise.all(
    chunks.map(
      (chunk, i) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), {
            workerData: { statements: chunk, catalogue, selfTest: i === 0 },
          });
          worker.once('message', resolve);
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`a lint worker exited (${code})`)));
        }),
    ),
  );
  return {
    test: answers[0].test,
    findings: new Map(answers.flatMap((a) => a.results)),
  };
}

async function main(argv) {
  const selfTestOnly = argv.includes('--self-test') && argv.length === 1;
  const paths = argv.filter((a) => a !== '--self-test');
  if (!selfTestOnly && paths.length === 0) {
    console.error('usage: lint.mjs [--self-test] FILE.jsonl|CAPTURE-DIR...');
    return 2;
  }
  const started = Date.now();
  const sources = [];
  for (const path of paths) {
    try {
      sources.push({ path, ...readSource(path) });
    } catch (e) {
      console.error(`cypher-lint: ${path}: ${e.message}`);
      return 2;
    }
  }
  const all = [...new Set(sources.flatMap((s) => s.statements))];
  const catalogue = [...SELF_TEST.map(([s]) => s), ...all];
  let test;
  let checked = new Map(); // statement -> findings, across sources
  if (selfTestOnly) {
    useCatalogue(catalogue);
    test = selfTest();
  } else {
    ({ test, findings: checked } = await checkAll(all, catalogue));
  }
  for (const f of test.failures) console.error(f);
  if (test.failures.length) {
    console.error('cypher-lint: the self-test failed: the gate cannot be trusted');
    return 1;
  }
  console.error(`cypher-lint: self-test passed (${test.cases} cases)`);
  if (selfTestOnly) return 0;

  const reported = new Set();
  const totals = { statements: 0, error: 0, deprecation: 0, warning: 0 };
  let failed = false;
  for (const source of sources) {
    const { path } = source;
    const distinct = [...new Set(source.statements)];
    const counts = { error: 0, deprecation: 0, warning: 0 };
    let fresh = 0;
    for (const statement of distinct) {
      const findings = checked.get(statement);
      if (!reported.has(statement)) {
        reported.add(statement);
        fresh += 1;
        for (const f of findings) {
          console.log(
            `\n${f.kind.toUpperCase()} (${f.version}, ${excerpt(statement, f.at)}) from ${basename(path)}: ${f.message}\n  ${statement.replace(/\n/g, '\n  ')}`,
          );
        }
      }
      for (const f of findings) counts[f.kind] += 1;
    }
    const name = `${path}${source.files > 1 ? ` (${source.files} files)` : ''}`;
    console.log(
      `cypher-lint: ${name}: ${distinct.length} distinct statements (${fresh} not seen in an earlier source): ${counts.error} errors, ${counts.deprecation} deprecations, ${counts.warning} warnings`,
    );
    if (distinct.length === 0) {
      console.log(`cypher-lint: ${path} holds no statement: nothing was captured?`);
      failed = true;
    }
    for (const k of ['error', 'deprecation', 'warning']) {
      if (counts[k]) failed = true;
    }
  }
  for (const findings of checked.values()) {
    totals.statements += 1;
    for (const f of findings) totals[f.kind] += 1;
  }
  console.log(
    `cypher-lint: ${totals.statements} distinct statements checked in ${((Date.now() - started) / 1000).toFixed(1)} s: ${totals.error} errors, ${totals.deprecation} deprecations, ${totals.warning} warnings${failed ? ': FAILED' : ': ok'}`,
  );
  return failed ? 1 : 0;
}

if (isMainThread) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      console.error(`cypher-lint: ${e.stack ?? e}`);
      process.exitCode = 2;
    },
  );
} else {
  useCatalogue(workerData.catalogue);
  const test = workerData.selfTest ? selfTest() : null;
  const results = workerData.statements.map((statement) => [statement, check(statement)]);
  parentPort.postMessage({ test, results });
}
