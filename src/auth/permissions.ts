// The permission catalog. Write implies read (asking and answering decisions imply reading them); download, restore, delete
// (lowering a schedule's retention so that backups go: they are gone for good), reading caught mail, reading a service's logs
// (which can hold personal data and reset links) and reading the team's activity (what every token did) are permissions of
// their own, implied by nothing but full access.
export const PERMISSIONS = [
  { id: 'services:read', label: 'Read ERP services (and their copies)', group: 'ERP services', implies: [] },
  { id: 'services:operate', label: 'Start, stop and redeploy ERP services', group: 'ERP services', implies: ['services:read'] },
  { id: 'services:write', label: 'Create, change and delete ERP services and copies', group: 'ERP services', implies: ['services:read'] },
  { id: 'services:logs', label: 'Read ERP service logs', group: 'ERP services', implies: [] },
  { id: 'servers:read', label: 'Read servers', group: 'Servers', implies: [] },
  { id: 'servers:write', label: 'Create, change and delete servers', group: 'Servers', implies: ['servers:read'] },
  { id: 'backups:read', label: 'Read backups', group: 'Backups', implies: [] },
  { id: 'backups:create', label: 'Create backups', group: 'Backups', implies: ['backups:read'] },
  { id: 'backups:download', label: 'Download backups', group: 'Backups', implies: [] },
  { id: 'backups:restore', label: 'Restore backups', group: 'Backups', implies: [] },
  { id: 'backups:delete', label: "Delete backups (lower a schedule's retention so that backups go)", group: 'Backups', implies: [] },
  { id: 'mailcatcher:read', label: "Read emails kept by copies' mail catchers", group: 'Mail catcher', implies: [] },
  { id: 'decisions:read', label: 'Read decisions asked of the team', group: 'Decisions', implies: [] },
  { id: 'decisions:request', label: 'Ask the team for decisions', group: 'Decisions', implies: ['decisions:read'] },
  { id: 'decisions:answer', label: 'Answer decisions that others asked', group: 'Decisions', implies: ['decisions:read'] },
  { id: 'activity:read', label: "Read the team's activity", group: 'Activity', implies: [] },
] as const;

export type PermissionId = (typeof PERMISSIONS)[number]['id'];

export const PERMISSION_IDS: readonly PermissionId[] = PERMISSIONS.map((permission) => permission.id);

const impliedBy = new Map<PermissionId, readonly PermissionId[]>(
  PERMISSIONS.map((permission) => [permission.id, permission.implies as readonly PermissionId[]]),
);

export function isPermissionId(value: string): value is PermissionId {
  return impliedBy.has(value as PermissionId);
}

/** The chosen permissions plus everything they imply. */
export function expandPermissions(chosen: readonly PermissionId[]): ReadonlySet<PermissionId> {
  const held = new Set<PermissionId>();
  for (const id of chosen) {
    held.add(id);
    for (const implied of impliedBy.get(id) ?? []) held.add(implied);
  }
  return held;
}

/** Parses the stored comma-separated list; unknown identifiers (from a newer version) are ignored. */
export function parseStoredPermissions(stored: string): PermissionId[] {
  return stored.split(',').map((id) => id.trim()).filter(isPermissionId);
}
