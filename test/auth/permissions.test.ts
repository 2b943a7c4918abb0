import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandPermissions, PERMISSION_IDS, PERMISSIONS } from '../../src/auth/permissions.js';
import { packageRoot } from '../../src/package-root.js';

describe('permission catalog', () => {
  it('names services:operate "Start, stop and redeploy ERP services"', () => {
    expect(PERMISSIONS.find((permission) => permission.id === 'services:operate')?.label).toBe('Start, stop and redeploy ERP services');
  });

  it('names services:logs "Read ERP service logs"', () => {
    expect(PERMISSIONS.find((permission) => permission.id === 'services:logs')?.label).toBe('Read ERP service logs');
  });

  it('lets every write permission imply the matching read', () => {
    expect([...expandPermissions(['services:write'])].sort()).toEqual(['services:read', 'services:write']);
    expect([...expandPermissions(['services:operate'])].sort()).toEqual(['services:operate', 'services:read']);
    expect([...expandPermissions(['servers:write'])].sort()).toEqual(['servers:read', 'servers:write']);
    expect([...expandPermissions(['backups:create'])].sort()).toEqual(['backups:create', 'backups:read']);
  });

  it('keeps download, restore, delete, reading caught mail, service logs and the activity as permissions of their own', () => {
    for (const own of ['backups:download', 'backups:restore', 'backups:delete', 'mailcatcher:read', 'services:logs', 'activity:read'] as const) {
      const impliedByOthers = PERMISSION_IDS.filter((id) => id !== own).some((id) => expandPermissions([id]).has(own));
      expect(impliedByOthers).toBe(false);
      expect([...expandPermissions([own])]).toEqual([own]);
    }
  });

  it('is the permission table of docs/rest-api.md, every permission once', () => {
    const page = readFileSync(join(packageRoot, 'docs/rest-api.md'), 'utf8');
    const table = page.slice(page.indexOf('| Permission | Label |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = rows.map((row) => /^\| `([a-z]+:[a-z]+)` \|/.exec(row)?.[1]);
    expect([...documented].sort()).toEqual([...PERMISSION_IDS].sort());
  });
});
