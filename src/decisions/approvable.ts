// The actions a token can be set to need approval for ("Needs approval for"). The catalog marks
// them (`approvable`); this list names them (with their catalog titles) for the command line and
// the panel without loading the catalog, and a test keeps the two equal.
export const APPROVABLE_ACTIONS = [
  'stop_erp_service', 'redeploy_erp_service', 'delete_erp_service', 'restore_backup', 'set_backup_schedule',
  'move_erp_service', 'rollback_erp_service_move',
] as const;

export type ApprovableAction = (typeof APPROVABLE_ACTIONS)[number];

/** The catalog's title of each approvable action, as a person reads it on the panel. */
export const APPROVABLE_ACTION_TITLES: Record<ApprovableAction, string> = {
  stop_erp_service: 'Stop an ERP service',
  redeploy_erp_service: 'Redeploy an ERP service',
  delete_erp_service: 'Delete an ERP service',
  restore_backup: 'Restore a backup',
  set_backup_schedule: 'Set a backup schedule',
  move_erp_service: 'Move an ERP service',
  rollback_erp_service_move: 'Roll back a move',
};

/** When an action waits for approval only with some inputs (its capability's `destructiveWhen`), what they are. */
export const APPROVAL_ONLY_WHEN: Partial<Record<ApprovableAction, string>> = {
  set_backup_schedule: 'only when lowering its retention would remove backups that exist',
};

export function isApprovableAction(name: string): name is ApprovableAction {
  return (APPROVABLE_ACTIONS as readonly string[]).includes(name);
}

/** "needs_approval" as stored (comma-separated names) → the names, blanks left out. */
export function parseNeedsApproval(stored: string): string[] {
  return stored.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
}
