// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, its `server`
// command) against a URL for one protocol revision's requirement set, and reads back every
// check it recorded. The CLI's exit code is not the verdict: it counts only the scenarios a
// revision scores, and leaves out extensions we do offer (tasks); the caller judges each check.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/package-root.js';

const PACKAGE = join(packageRoot, 'node_modules', '@modelcontextprotocol', 'conformance');
const CLI = join(PACKAGE, 'dist', 'index.js');
export const CONFORMANCE_VERSION = (JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;

/** The suite's CLI needs Node 22 or newer (its engines field; it uses APIs Node 20 lacks). */
export const MINIMUM_NODE_MAJOR = 22;

/** Why the suite cannot run on this Node.js, in one sentence; undefined when it can. */
export function nodeRefusal(version = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return `The MCP conformance suite (@modelcontextprotocol/conformance ${CONFORMANCE_VERSION}) needs Node.js ${MINIMUM_NODE_MAJOR} or newer, ` +
    `and these tests run on Node.js ${version}: run them with Node.js 24 (npm install -g node@24), as .ci/run does.`;
}

export interface Check { id: string; status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'; errorMessage?: string; description?: string }
export interface ScenarioResult { scenario: string; checks: Check[] }
export interface ConformanceRun { exitCode: number | null; output: string; scenarios: ScenarioResult[] }

export function runConformance(url: string, revision: string, outputDir: string, timeoutMs = 240_000): Promise<ConformanceRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'server', '--url', url, '--requirements', revision, '--output-dir', outputDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`The conformance run did not end in ${timeoutMs} ms:\n${output}`)); }, timeoutMs);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output, scenarios: existsSync(outputDir) ? scenariosIn(outputDir) : [] });
    });
  });
}

/** Each `server-<scenario>-<timestamp>/checks.json` the CLI wrote. */
function scenariosIn(outputDir: string): ScenarioResult[] {
  return readdirSync(outputDir).filter((name) => existsSync(join(outputDir, name, 'checks.json'))).map((name) => ({
    scenario: name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, ''),
    checks: JSON.parse(readFileSync(join(outputDir, name, 'checks.json'), 'utf8')) as Check[],
  }));
}

/**
 * The server scenarios a revision's requirement set runs (scored, and not scored but run), read
 * from the package's own requirements/<revision>.yaml: a simple, frozen layout of lists.
 */
export function serverScenariosOf(revision: string): string[] {
  const text = readFileSync(join(PACKAGE, 'requirements', `${revision}.yaml`), 'utf8');
  const scored = /^server:\n((?:  - .+\n)+)/m.exec(text)?.[1] ?? '';
  const names = scored.split('\n').map((line) => line.replace(/^  - /, '').trim()).filter(Boolean);
  for (const entry of text.matchAll(/- scenario: (\S+)\n\s+leg: server/g)) names.push(entry[1] as string);
  return names;
}
