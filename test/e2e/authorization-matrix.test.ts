// The authorization matrix, generated from the catalog: every capability against every kind of
// token, over real HTTP against the real server. The expected outcome is computed here from the
// spec's rules, independently of src/core, so a regression in invoke() shows up as a cell.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateInTimeZone } from '../../src/auth/expiry.js';
import { expandPermissions, PERMISSION_IDS, type PermissionId } from '../../src/auth/permissions.js';
import type { Capability } from '../../src/core/capability.js';
import { revokeToken } from '../../src/db/repositories/tokens.js';
import { catalog } from '../../tools/index.js';
import { addHistory, requestFor, sampleInput, type SeededWithHistory } from '../support/catalog-samples.js';
import { makeToken, seedTeam, startTestServer, type TestServer, type TokenOptions } from '../support/fixtures.js';

// A zone far from UTC, so "today" and "yesterday" differ from the UTC dates most of the day.
const TEAM_ZONE = 'Pacific/Kiritimati';

type Expected =
  | { outcome: 'ok' }
  | { outcome: 'denied'; status: number; code: string; detail?: string };

interface TokenKind {
  name: string;
  plan?: 'free';
  token: (team: SeededWithHistory) => TokenOptions | 'missing' | 'malformed' | 'revoked';
  /** Which service the request targets (a copy, for the copy case). */
  targetService?: (team: SeededWithHistory) => string;
  expect: (capability: Capability) => Expected;
}

const ok: Expected = { outcome: 'ok' };
const invalidToken: Expected = { outcome: 'denied', status: 401, code: 'invalid_token' };
const notFound: Expected = { outcome: 'denied', status: 404, code: 'not_found' };

function dayOffset(days: number): string {
  const today = dateInTimeZone(new Date(), TEAM_ZONE);
  const date = new Date(`${today}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

const targetsService = (capability: Capability) =>
  capability.target.kind === 'service' || capability.target.kind === 'backup' || capability.target.kind === 'operation'
  || capability.target.kind === 'email' || capability.target.kind === 'decision';

const KINDS: TokenKind[] = [
  { name: 'full access', token: () => ({}), expect: () => ok },
  ...PERMISSION_IDS.map((permission): TokenKind => ({
    name: `only ${permission}`,
    token: () => ({ permissions: [permission] }),
    expect: (capability) => {
      if (capability.permission === null || expandPermissions([permission as PermissionId]).has(capability.permission)) return ok;
      // A token reads the operations it requested itself, whatever its permissions: the list
      // answers (with those only), and the sample operation, requested by nobody, is out of reach.
      if (capability.readableByRequester) return capability.target.kind === 'operation' ? notFound : ok;
      return {
        outcome: 'denied', status: 403, code: 'missing_permission',
        detail: `This API token does not have the ${capability.permission} scope.`,
      };
    },
  })),
  { name: 'accepted by the REST API only', token: () => ({ acceptedBy: 'api' }), expect: () => ok },
  {
    name: 'accepted by the MCP server only', token: () => ({ acceptedBy: 'mcp' }),
    expect: () => ({ outcome: 'denied', status: 403, code: 'channel_not_accepted' }),
  },
  { name: 'missing', token: () => 'missing', expect: () => invalidToken },
  { name: 'malformed', token: () => 'malformed', expect: () => invalidToken },
  { name: 'revoked', token: () => 'revoked', expect: () => invalidToken },
  { name: 'expired yesterday', token: () => ({ expiresOn: dayOffset(-1) }), expect: () => invalidToken },
  { name: 'expiring today (valid to the end of the day in the team zone)', token: () => ({ expiresOn: dayOffset(0) }), expect: () => ok },
  {
    name: 'restricted to another ERP service', token: (team) => ({ services: [team.serviceIds[1]] }),
    expect: (capability) => {
      if (capability.creates === 'service') {
        return { outcome: 'denied', status: 403, code: 'restricted_token_cannot_create' };
      }
      return targetsService(capability) ? notFound : ok;
    },
  },
  {
    name: 'restricted to the parent, targeting its copy', token: (team) => ({ services: [team.serviceIds[0]] }),
    targetService: (team) => team.copyId,
    expect: (capability) => (capability.creates === 'service'
      ? { outcome: 'denied', status: 403, code: 'restricted_token_cannot_create' }
      : ok),
  },
  {
    name: 'restricted to another server', token: (team) => ({ servers: [team.serverIds[1]] }),
    expect: (capability) => {
      if (capability.creates === 'server') return { outcome: 'denied', status: 403, code: 'restricted_token_cannot_create' };
      if (capability.target.kind === 'server') return notFound;
      if (capability.creates === 'service' && 'server_id' in capability.input.shape) return notFound;
      return ok;
    },
  },
  {
    name: 'of a team on the free plan', plan: 'free', token: () => ({}),
    expect: () => ({ outcome: 'denied', status: 403, code: 'plan_excludes_api' }),
  },
];

/**
 * Only the token that asked a decision can cancel it; the sample decision was asked by another
 * token of the team, so a call that passes every other check is refused for that reason. The
 * same for recovering a service whose server is not lost, moving it to the server it is on, and
 * rolling back a move it never made.
 */
function expectedFor(kind: TokenKind, capability: Capability): Expected {
  const expected = kind.expect(capability);
  if (expected.outcome === 'ok' && capability.name === 'cancel_decision') {
    return { outcome: 'denied', status: 403, code: 'not_decision_asker' };
  }
  // The sample service's server is not lost: a call that passes every authorization check is
  // refused only for that, since the service may still run there (recovery.ts).
  if (expected.outcome === 'ok' && capability.name === 'recover_erp_service') {
    return { outcome: 'denied', status: 409, code: 'conflict' };
  }
  // A move must reach the server it goes to as well: a token limited to another server does not
  // reach the sample's (404); every other call that passes the checks names the server the
  // sample service is already on, refused for that alone (400).
  if (expected.outcome === 'ok' && capability.name === 'move_erp_service') {
    return kind.name === 'restricted to another server' ? notFound : { outcome: 'denied', status: 400, code: 'validation_failed' };
  }
  // The sample service was never moved: a rollback that passes every check has nothing to undo.
  if (expected.outcome === 'ok' && capability.name === 'rollback_erp_service_move') {
    return { outcome: 'denied', status: 409, code: 'conflict' };
  }
  return expected;
}

describe('authorization matrix over REST', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer(); });
  afterAll(async () => { await server.close(); });

  for (const capability of catalog) {
    describe(`${capability.http.method} ${capability.http.path} (${capability.name})`, () => {
      for (const kind of KINDS) {
        const expected = expectedFor(kind, capability);
        const outcome = expected.outcome === 'ok' ? `answers ${capability.http.status}` : `refuses with ${expected.status} ${expected.code}`;
        it(`${outcome} for a token ${kind.name}`, async () => {
          // A fresh team per cell: actions of one cell cannot change what another sees.
          const team = await addHistory(server.app, await seedTeam(server.app, { plan: kind.plan ?? 'starter', timezone: TEAM_ZONE }));
          const spec = kind.token(team);
          let bearer: string | undefined;
          if (spec === 'malformed') bearer = 'tinf_not-a-real-token';
          else if (spec === 'revoked') {
            const token = await makeToken(server.app, team.teamId);
            await revokeToken(server.app.db.kysely, token.id);
            bearer = token.value;
          } else if (spec !== 'missing') bearer = (await makeToken(server.app, team.teamId, spec)).value;

          const input = sampleInput(capability, team, kind.targetService?.(team));
          const { path, body } = requestFor(capability, input);
          const response = await fetch(server.baseUrl + path, {
            method: capability.http.method,
            headers: {
              Accept: 'application/json',
              ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
              ...(body ? { 'Content-Type': 'application/json' } : {}),
            },
            body,
          });
          const isJson = /json/.test(response.headers.get('content-type') ?? '');
          const json = (isJson ? await response.json() : await response.text()) as { code?: string; detail?: string };
          if (expected.outcome === 'ok') {
            expect(response.status, JSON.stringify(json)).toBe(capability.http.status);
          } else {
            expect(response.status, JSON.stringify(json)).toBe(expected.status);
            expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            expect(json.code).toBe(expected.code);
            if (expected.detail) expect(json.detail).toBe(expected.detail);
            if (expected.status === 401) expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="teaminfra"/);
          }
        });
      }
    });
  }
});
