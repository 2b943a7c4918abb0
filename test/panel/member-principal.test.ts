// What each role may do, as docs/panel.md writes it down, is what the panel hands invoke(): the
// table names every permission once, and says yes exactly where the role holds it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMISSION_IDS } from '../../src/auth/permissions.js';
import type { Role } from '../../src/db/tables.js';
import { packageRoot } from '../../src/package-root.js';
import { memberPrincipal, roleHolds } from '../../src/panel/member-principal.js';
import type { TeamSession } from '../../src/panel/session-guard.js';

const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

const sessionOf = (role: Role): TeamSession => ({
  idHash: 'hash', userId: `usr_${role}`, email: `${role}@example.com`, csrfSecret: 'secret',
  team: { id: 'team_x', name: 'Team', role, timezone: 'UTC' },
});

/** The rows of docs/panel.md's role table: the permission ids a row names, and its yes/no per role. */
function documentedTable(): { ids: string[]; allowed: Record<Role, boolean> }[] {
  const doc = readFileSync(join(packageRoot, 'docs', 'panel.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## What each role may do to services'));
  return section.split('\n').filter((line) => /^\| `/.test(line)).map((line) => {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    const [first, ...answers] = cells as [string, ...string[]];
    return {
      ids: [...first.matchAll(/`([a-z]+:[a-z]+)`/g)].map((match) => match[1] as string),
      allowed: Object.fromEntries(ROLES.map((role, index) => [role, answers[index] === 'yes'])) as Record<Role, boolean>,
    };
  });
}

describe('the permissions of each role in the panel', () => {
  it('are the ones docs/panel.md lists, every permission once', () => {
    const table = documentedTable();
    expect(table.flatMap((row) => row.ids).sort()).toEqual([...PERMISSION_IDS].sort());
    for (const row of table) {
      for (const id of row.ids) {
        for (const role of ROLES) expect(roleHolds(sessionOf(role), id as never), `${role} ${id}`).toBe(row.allowed[role]);
      }
    }
  });

  it('let a member read and operate but not delete, download or restore', () => {
    const member = sessionOf('member');
    for (const permission of ['services:read', 'services:operate', 'backups:create'] as const) expect(roleHolds(member, permission)).toBe(true);
    for (const permission of ['services:write', 'backups:download', 'backups:restore'] as const) expect(roleHolds(member, permission)).toBe(false);
  });

  it('reach the whole team, with no token behind them', () => {
    expect(memberPrincipal(sessionOf('member')).reach).toEqual({ teamId: 'team_x', tokenId: '', restrictServices: false, restrictServers: false });
    expect(memberPrincipal(sessionOf('owner')).member).toEqual({ userId: 'usr_owner', role: 'owner' });
  });
});
