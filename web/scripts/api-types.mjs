// Generates src/api-schema.d.ts, the TypeScript types of the HTTP API, from
// docs/openapi.json with openapi-typescript (its Node API, so the options live here once).
// `npm run api:types` writes the file; `npm run api:types -- --check` (and the Vitest test
// src/api-schema.test.ts, run by `npm test`) fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

export const SOURCE = new URL('../../docs/openapi.json', import.meta.url);
export const TARGET = new URL('../src/api-schema.d.ts', import.meta.url);

const HEADER = `// Generated from docs/openapi.json by \`npm run api:types\` (scripts/api-types.mjs,
// openapi-typescript). Do not edit: change the document and run the script again.
`;

/** The generated file's text. */
export async function generate() {
  const ast = await openapiTS(SOURCE, {
    // A bare \`type: object\` (a tool's JSON Schema, an action report) is any object, not
    // \`Record<string, never>\`.
    emptyObjectsUnknown: true,
    // A request field with a default may be left out: optional, not required.
    defaultNonNullable: false,
    silent: true,
  });
  return HEADER + astToString(ast);
}

/** The committed file's text ('' when there is none). */
export function committed() {
  try {
    return readFileSync(TARGET, 'utf8');
  } catch {
    return '';
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (!process.argv.includes('--check')) writeFileSync(TARGET, text);
  else if (committed() !== text) {
    console.error(`${fileURLToPath(TARGET)} is stale: run \`npm run api:types\` in web/`);
    process.exit(1);
  }
}
