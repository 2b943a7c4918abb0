// Kysely's classes and `sql`, from its CommonJS build. Its ESM build is 262 files that Node links
// one by one: measured here, importing it takes about twice as long as requiring the CommonJS
// build (about 110 ms against 55), and `teaminfra mcp` is started by assistants, who wait for it.
// The three modules that need Kysely's values take them from here, so only one build is ever
// loaded (an instanceof check in dialect.ts relies on that); types still come from 'kysely'.
import { createRequire } from 'node:module';
import type * as KyselyModule from 'kysely';

const runtime = createRequire(import.meta.url)('kysely') as typeof KyselyModule;

export const { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, SqliteQueryCompiler, sql } = runtime;
export type Kysely<DB> = KyselyModule.Kysely<DB>;
