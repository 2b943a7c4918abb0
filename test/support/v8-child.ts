// Runs an ES module script in a child Node with V8's test flags: `%InYoungGeneration(x)` to ask
// where an object lives, `gc()` to collect. The flags are the process's, so a child runs them.
// The script prints one JSON line last; that line is the answer.
import { inChildNode } from './node-child.js';

export function inV8Child(script: string): Record<string, unknown> {
  return inChildNode(script, { nodeArgs: ['--allow-natives-syntax', '--expose-gc'] });
}
