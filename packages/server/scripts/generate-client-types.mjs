#!/usr/bin/env node
// Writes the types of @retryd/client's RetrydClient (packages/client/src/service/generated/openapi.ts) from the
// OpenAPI document the service publishes, with openapi-typescript. The file is committed: the client builds before
// the server (the server's CLI uses the client), so it cannot be generated during its own build.
// `--check` writes nothing and exits 1 when the committed file differs from what the document gives (a test runs it),
// so the client's types cannot drift from the service. Needs the server built (dist/).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openapiDocument } from './openapi-document.mjs';

const target = fileURLToPath(new URL('../../client/src/service/generated/openapi.ts', import.meta.url));
const HEADER =
  '// Generated from the retryd service\'s OpenAPI document by packages/server/scripts/generate-client-types.mjs\n' +
  '// (openapi-typescript). Do not edit: run `npm run generate:client-types -w packages/server` after changing a route.\n';

const source = HEADER + astToString(await openapiTS(await openapiDocument(), { exportType: true, alphabetize: false }));
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // Missing: differs.
  }
  if (committed !== source) {
    console.error(`${target} is not what the OpenAPI document gives: run npm run generate:client-types -w packages/server`);
    process.exit(1);
  }
  console.log('client types match the OpenAPI document');
} else {
  writeFileSync(target, source);
  console.log(`wrote ${target}`);
}
