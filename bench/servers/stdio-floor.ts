// Baseline for the stdio start-up: a bare Node process that answers initialize and tools/list
// over stdin/stdout with the exact lines teaminfra answered. The floor of "start a Node process
// and speak over a pipe": no modules, no database, no token check.
// argv: <answers.json> holding { initialize, toolsList } (the JSON-RPC results, as sent)
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const file = process.argv[2];
if (!file) throw new Error('usage: stdio-floor.js <answers.json>');
const answers = JSON.parse(readFileSync(file, 'utf8')) as { initialize: unknown; toolsList: unknown };

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line) as { id?: number | string; method?: string };
  if (message.id === undefined) continue;
  const result = message.method === 'initialize' ? answers.initialize : message.method === 'tools/list' ? answers.toolsList : {};
  process.stdout.write(JSON.stringify({ result, jsonrpc: '2.0', id: message.id }) + '\n');
}
