// Reading the activity trail in a test as a client does (GET /api/activity), after the audit
// buffer is written: the entries one token made, newest first.
import { expect } from 'vitest';
import type { TestServer } from './fixtures.js';
import { getJson } from './fixtures.js';

export interface TrailEntry {
  token: { id: string; name: string | null; source: string | null } | null;
  member: { id: string; email: string | null } | null;
  channel: string;
  action: string;
  target: { type: string; id: string } | null;
  outcome: string;
  code: string | null;
}

/** `auditor`: a token with activity:read in the team of `tokenId`. */
export async function trailOfToken(server: TestServer, auditor: string, tokenId: string): Promise<TrailEntry[]> {
  await server.app.audit.flush();
  const answer = await getJson(server.baseUrl, `/api/activity?token_id=${tokenId}`, auditor);
  expect(answer.status).toBe(200);
  return answer.body.data as TrailEntry[];
}
