// How a backup kept on a Docker engine is named (docker://SERVER/SERVICE/FILE?image=IMAGE), apart
// from the code that fetches it, so that telling the two kinds of backup apart loads no engine
// client (the stdio MCP server loads every capability at start).
export const ENGINE_BACKUP_SCHEME = 'docker:';

export function isEngineBackupPath(path: string): boolean {
  return path.startsWith(`${ENGINE_BACKUP_SCHEME}//`);
}

/** The server, the file's name in the server's backups volume (SERVICE/FILE) and the image that wrote it, of such a path. */
export function engineBackupLocation(path: string): { serverId: string; name: string; image: string } {
  const url = new URL(path);
  return { serverId: url.hostname, name: decodeURIComponent(url.pathname.slice(1)), image: url.searchParams.get('image') ?? '' };
}
