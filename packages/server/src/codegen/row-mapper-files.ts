import type { GeneratedFile } from './task-literal.js';
import { viewMapperFile } from '../api/view-mapper-source.js';
import { postgresMapperFiles } from '../backends/postgres/row-mapper-source.js';
import { redisMapperFile } from '../backends/redis/row-mapper-source.js';
import { sqliteMapperFile } from '../backends/sqlite/row-mapper-source.js';

// Every mapper that spells a task out field by field is generated from the one definition of its fields
// (domain/task-fields.ts) into checked-in TypeScript, as River generates its query code with sqlc: plain property reads
// and one object literal per mapper, readable and type-checked, with no source compiled at start. The files are
// written by scripts/generate-row-mappers.mjs, and test/row-mappers-generated.test.ts fails when one is stale.

export type { GeneratedFile } from './task-literal.js';

/** The generated mapper modules, each with its path under `src/`. */
export function rowMapperFiles(): GeneratedFile[] {
  return [viewMapperFile(), ...postgresMapperFiles(), redisMapperFile(), sqliteMapperFile()];
}
