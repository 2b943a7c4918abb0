import { z } from 'zod';
import { defineCapability } from '../../src/core/capability.js';
import { AppError } from '../../src/core/errors.js';
import { restrictionLists } from '../../src/db/repositories/tokens.js';
import { PermissionIdSchema } from '../schemas.js';

// Read-only and about the caller only: tokens are managed on the panel's API Tokens page.
export default defineCapability({
  name: 'get_current_token',
  title: "Show this token's access",
  description: "This token's team, channels, permissions, expiry, and the services and servers it is limited to (null: all).",
  permission: null,
  target: { kind: 'caller' },
  input: () => z.strictObject({}),
  output: () => z.object({
    id: z.string(),
    name: z.string(),
    source: z.enum(['panel', 'cli', 'assistant', 'legacy']),
    team: z.object({ id: z.string(), name: z.string(), plan: z.string() }),
    accepted_by: z.enum(['api', 'mcp', 'both']),
    full_access: z.boolean(),
    permissions: z.array(PermissionIdSchema()).describe('Held permissions, implications included; empty with full access.'),
    services: z.array(z.string()).nullable().describe('The ERP services it is limited to (and their copies); null: all.'),
    servers: z.array(z.string()).nullable().describe('The servers it is limited to; null: all.'),
    expires_on: z.string().nullable().describe('Works until the end of this day in the team time zone; null: never expires.'),
  }),
  http: { method: 'GET', path: '/api/token', status: 200 },
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  errors: [],
  run: async (_input, { db, reach, caller }) => {
    // invoke() lets no member in the panel this far (permission null is a token's own); said again for the type.
    if (!caller) throw new AppError('not_found', 'A member in the panel calls with no API token: there is no calling token to read.');
    const lists = await restrictionLists(db.kysely, caller.tokenId);
    return {
      id: caller.tokenId,
      name: caller.tokenName,
      source: caller.source as 'panel',
      team: { id: caller.teamId, name: caller.teamName, plan: caller.plan },
      accepted_by: caller.acceptedBy,
      full_access: caller.fullAccess,
      permissions: [...caller.permissions].sort(),
      services: reach.restrictServices ? lists.serviceIds : null,
      servers: reach.restrictServers ? lists.serverIds : null,
      expires_on: caller.expiresOn,
    };
  },
});
