// The first module `teaminfra mcp` runs (src/cli/mcp.ts imports it before any other): zod, left to
// itself, parses an object schema by code it writes and compiles (new Function) on that schema's
// first parse, which pays off over thousands of parses. The stdio command parses a handful before
// its first answers (each request's JSON-RPC envelope and params, checked by the SDK and by us),
// and a few per call after: compiling them costs its start more than it saves (about 5 ms of the
// 2025-era initialize, docs/benchmarks.md "stdio"). zod reads the setting when a schema is built,
// so it is set before any is. The HTTP server (`teaminfra serve`) keeps the compiled parsers.
import { config } from 'zod';

config({ jitless: true });
