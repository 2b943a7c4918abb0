// The actions a token can be set to need approval for ("Needs approval for"). The catalog marks
// them (`approvable`); this list names them for the command line and the panel without loading
// the catalog, and a test keeps the two equal.
export const APPROVABLE_ACTIONS = ['stop_erp_service', 'redeploy_erp_service', 'delete_erp_service', 'restore_backup'] as const;

export function isApprovableAction(name: string): boolean {
  return (APPROVABLE_ACTIONS as readonly string[]).includes(name);
}
