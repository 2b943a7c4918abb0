// REST and MCP are two faces of one catalog: for every capability, the same token and the same
// input must give the same data or the same denial (code, sentence and problem fields) on both.
// Reads run twice against one team; actions run once per channel against twin teams, and their
// answers are compared with generated ids, timestamps and the channel name normalized away.
// A download answers REST with the file and MCP with a single-use link: the link must give the
// very same bytes.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_IDS } from '../../src/auth/permissions.js';
import type { Capability } from '../../src/core/capability.js';
import { catalog } from '../../tools/index.js';
import { addHistory, requestFor, sampleDomain, sampleInput, type SeededWithHistory } from '../support/catalog-samples.js';
import { makeToken, seedTeam, startTestServer, type TestServer, type TokenOptions } from '../support/fixtures.js';
import { connectHttp, problemIn } from '../mcp/clients.js';

interface Kind {
  name: string;
  token: (team: SeededWithHistory) => TokenOptions;
  /** Which input to send; defaults to the catalog sample. */
  input?: (capability: Capability, team: SeededWithHistory) => Record<string, unknown>;
}

const KINDS: Kind[] = [
  { name: 'with full access', token: () => ({}) },
  ...PERMISSION_IDS.map((permission): Kind => ({ name: `with only ${permission}`, token: () => ({ permissions: [permission] }) })),
  { name: 'restricted to another ERP service', token: (team) => ({ services: [team.serviceIds[1]] }) },
  { name: 'restricted to another server', token: (team) => ({ servers: [team.serverIds[1]] }) },
  {
    name: 'restricted to a service, targeting its copy', token: (team) => ({ services: [team.serviceIds[0]] }),
    input: (capability, team) => sampleInput(capability, team, team.copyId),
  },
  {
    name: 'with full access and an unknown argument', token: () => ({}),
    input: (capability, team) => ({ ...sampleInput(capability, team), bogus: 'x' }),
  },
  {
    name: 'with full access and a malformed id', token: () => ({}),
    input: (capability, team) => {
      const input = sampleInput(capability, team);
      for (const field of Object.keys(input)) if (field.endsWith('_id')) input[field] = 'not-an-id';
      return input;
    },
  },
];

let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(async () => { await server.close(); });

interface Answer { ok: boolean; body: unknown }

async function overRest(capability: Capability, bearer: string, input: Record<string, unknown>): Promise<Answer> {
  const { path, body } = requestFor(capability, input);
  const response = await fetch(server.baseUrl + path, {
    method: capability.http.method,
    headers: { Accept: 'application/json', Authorization: `Bearer ${bearer}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
  });
  const json = /json/.test(response.headers.get('content-type') ?? '');
  return { ok: response.ok, body: json ? await response.json() : await response.text() };
}

/** What a download link handed out over MCP serves. */
async function fetched(link: unknown): Promise<string> {
  const response = await fetch(new URL(String((link as { download_url: string }).download_url), server.baseUrl));
  expect(response.status).toBe(200);
  return response.text();
}

async function overMcp(client: Client, capability: Capability, input: Record<string, unknown>): Promise<Answer> {
  const result = await client.callTool({ name: capability.name, arguments: input });
  return result.isError ? { ok: false, body: problemIn(result) } : { ok: true, body: result.structuredContent };
}

async function prepared(kind: Kind, capability: Capability) {
  const team = await addHistory(server.app, await seedTeam(server.app));
  const token = await makeToken(server.app, team.teamId, kind.token(team));
  return { team, token, input: kind.input?.(capability, team) ?? sampleInput(capability, team) };
}

/** Seeded ids become their role; generated ids, timestamps and the channel become placeholders. */
function normalized(value: unknown, team: SeededWithHistory): unknown {
  const roles = new Map<string, string>([
    [team.teamId, '<team>'], [team.serverIds[0], '<server 0>'], [team.serverIds[1], '<server 1>'],
    [team.serviceIds[0], '<service 0>'], [team.serviceIds[1], '<service 1>'], [team.copyId, '<copy>'],
    [team.backupId, '<backup>'], [team.operationId, '<operation>'], [team.emailId, '<email>'],
    [sampleDomain(team.serviceIds[0]), '<domain of service 0>'], [sampleDomain(team.copyId), '<domain of copy>'],
  ]);
  const walk = (item: unknown, key?: string): unknown => {
    if (Array.isArray(item)) return item.map((entry) => walk(entry));
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([name, entry]) => [name, walk(entry, name)]));
    }
    if (typeof item !== 'string') return item;
    if (roles.has(item)) return roles.get(item);
    if (/^[a-z]+_[0-9a-z]{20}$/.test(item)) return '<generated id>';
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(item)) return '<time>';
    if (key === 'requested_channel' || key === 'channel') return '<channel>';
    return item;
  };
  return walk(value);
}

describe('REST and MCP parity', () => {
  for (const capability of catalog) {
    describe(`${capability.name} (${capability.http.method} ${capability.http.path})`, () => {
      for (const kind of KINDS) {
        it(`gives the same answer over REST and MCP for a token ${kind.name}`, async () => {
          if (capability.hints.readOnly) {
            const { token, input } = await prepared(kind, capability);
            const rest = await overRest(capability, token.value, input);
            const mcp = await connectHttp(server.baseUrl, token.value);
            const answer = await overMcp(mcp.client, capability, input);
            await mcp.close();
            if (capability.download && answer.ok) {
              expect(rest.ok).toBe(true);
              expect(await fetched(answer.body)).toBe(rest.body);
              return;
            }
            expect(answer).toEqual(rest);
            return;
          }
          // An action changes what it acts on: each channel acts on a twin team of its own.
          const restSide = await prepared(kind, capability);
          const mcpSide = await prepared(kind, capability);
          const rest = await overRest(capability, restSide.token.value, restSide.input);
          const mcp = await connectHttp(server.baseUrl, mcpSide.token.value);
          const answer = await overMcp(mcp.client, capability, mcpSide.input);
          await mcp.close();
          expect(answer.ok).toBe(rest.ok);
          expect(normalized(answer.body, mcpSide.team)).toEqual(normalized(rest.body, restSide.team));
          if (answer.ok && typeof answer.body === 'object' && answer.body !== null && 'requested_channel' in answer.body) {
            expect(answer.body.requested_channel).toBe('mcp');
          }
        });
      }
    });
  }
});
