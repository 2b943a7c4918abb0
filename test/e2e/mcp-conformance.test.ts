// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real
// `teaminfra serve`, for both protocol revisions we serve, each run at its own wire (2025-11-25
// through initialize, 2026-07-28 per request). Every check must pass except those listed in
// support/conformance-not-claimed.ts with their reason, and each of those must still fail.
// The suite needs Node 22 or newer: on an older Node these tests fail with that sentence.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, startServe, type ServeProcess } from '../support/cli.js';
import { forwardWithBearer, type BearerForwarder } from '../support/bearer-forwarder.js';
import { tempDataDir } from '../support/fixtures.js';
import { nodeRefusal, runConformance, serverScenariosOf, type ConformanceRun } from '../support/mcp-conformance.js';
import { NOT_CLAIMED } from './support/conformance-not-claimed.js';

const REVISIONS = ['2025-11-25', '2026-07-28'] as const;

let serve: ServeProcess | undefined;
let forwarder: BearerForwarder | undefined;
const runs = new Map<string, Promise<ConformanceRun>>();

beforeAll(async () => {
  if (nodeRefusal()) return;
  const dataDir = tempDataDir();
  const teamId = (await admin(dataDir, ['create-team', '--name', 'Conformance', '--plan', 'starter'])).id as string;
  await admin(dataDir, ['create-server', '--team', teamId, '--name', 'local']);
  const token = (await admin(dataDir, ['create-token', '--team', teamId, '--name', 'conformance', '--full-access', '--accepted-by', 'mcp'])).token as string;
  serve = await startServe(dataDir);
  forwarder = await forwardWithBearer(serve.baseUrl, token);
});
afterAll(async () => {
  await forwarder?.close();
  await serve?.stop();
});

/** One run per revision, shared by the tests that read it. */
function conformanceRun(revision: string): Promise<ConformanceRun> {
  const refusal = nodeRefusal();
  if (refusal) throw new Error(refusal);
  if (!runs.has(revision)) {
    const outputDir = mkdtempSync(join(tmpdir(), `teaminfra-conformance-${revision}-`));
    runs.set(revision, runConformance(`${forwarder!.url}/mcp`, revision, outputDir));
  }
  return runs.get(revision)!;
}

describe('the MCP conformance suite', () => {
  it('names the Node.js it needs when it cannot run, instead of skipping', () => {
    expect(nodeRefusal('20.20.2')).toMatch(/needs Node\.js 22 or newer, and these tests run on Node\.js 20\.20\.2: run them with Node\.js 24/);
    expect(nodeRefusal('22.12.0')).toBeUndefined();
    expect(nodeRefusal('24.21.0')).toBeUndefined();
  });

  it.each(REVISIONS)('passes every check we claim, and fails only those we do not, for MCP %s', async (revision) => {
    const run = await conformanceRun(revision);
    const ran = run.scenarios.map((result) => result.scenario);
    expect(ran.length, run.output).toBeGreaterThan(0);
    expect(serverScenariosOf(revision).filter((scenario) => !ran.includes(scenario)), 'scenarios of the requirement set that did not run').toEqual([]);

    const notClaimed = new Set(NOT_CLAIMED[revision]!.flatMap((entry) => entry.checks));
    const failed = run.scenarios.flatMap(({ scenario, checks }) =>
      checks.filter((check) => check.status === 'FAILURE').map((check) => ({ key: `${scenario}:${check.id}`, message: check.errorMessage ?? '' })));
    const unexpected = failed.filter((failure) => !notClaimed.has(failure.key)).map((failure) => `${failure.key}: ${failure.message}`);
    expect(unexpected, 'checks that fail and that we claim').toEqual([]);
    const stale = [...notClaimed].filter((key) => !failed.some((failure) => failure.key === key));
    expect(stale, 'checks listed as not claimed that no longer fail: remove them from the list').toEqual([]);
  }, 300_000);

  it('answers server/discover (2026-07-28) as the suite checks it: implemented, and its capabilities honoured', async () => {
    const run = await conformanceRun('2026-07-28');
    const stateless = run.scenarios.find((result) => result.scenario === 'server-stateless');
    const statusOf = (id: string) => stateless?.checks.filter((check) => check.id === id).map((check) => check.status);
    expect(statusOf('sep-2575-server-implements-discover')).toEqual(['SUCCESS']);
    expect(statusOf('sep-2575-discover-capabilities-match-handlers')).toEqual(['SUCCESS']);
    expect(statusOf('sep-2575-server-unsupported-version-error')).toEqual(['SUCCESS']);
  }, 300_000);

  it('passes the 2025-11-25 handshake and the DNS-rebinding guard', async () => {
    const run = await conformanceRun('2025-11-25');
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
      const checks = run.scenarios.find((result) => result.scenario === scenario)?.checks ?? [];
      expect(checks.length, scenario).toBeGreaterThan(0);
      expect(checks.filter((check) => check.status === 'FAILURE'), scenario).toEqual([]);
    }
  }, 300_000);
});
