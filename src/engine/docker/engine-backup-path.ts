// How a backup kept on a Docker engine is named (docker://SERVER/SERVICE/FILE?image=IMAGE), apart
// from the code that fetches it, so that telling the two kinds of backup apart loads no engine
// client (the stdio MCP server loads every capability at start).
export const ENGINE_BACKUP_SCHEME = 'docker:';

export function isEngineBackupPath(path: string): boolean {
  return path.startsWith(`${ENGINE_BACKUP_SCHEME}//`);
}
