// Where a backup is kept, as its answer shows it (`locations`): on its server (the file the
// driver wrote, in the server's backups volume for a Docker service) and, when its team has a
// destination, off-site. Each is stored, pending or failed with the reason in a sentence.
export interface BackupLocation {
  kind: 'server' | 'offsite';
  state: 'stored' | 'pending' | 'failed';
  reason: string | null;
}

export function locationsOf(
  backup: { state: 'pending' | 'completed' | 'failed'; reason: string | null; server_copy_reason?: string | null },
  offsite: { state: 'pending' | 'stored' | 'failed'; reason: string | null } | undefined,
): BackupLocation[] {
  const server: BackupLocation = backup.state === 'pending' ? { kind: 'server', state: 'pending', reason: null }
    : backup.state === 'failed' ? { kind: 'server', state: 'failed', reason: backup.reason }
      : backup.server_copy_reason ? { kind: 'server', state: 'failed', reason: backup.server_copy_reason }
        : { kind: 'server', state: 'stored', reason: null };
  return offsite ? [server, { kind: 'offsite', state: offsite.state, reason: offsite.state === 'stored' ? null : offsite.reason }] : [server];
}
