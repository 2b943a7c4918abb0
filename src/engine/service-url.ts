// A service's address, shown as `url` in its view and its events.
/** Where a running service answers: its port on its server's host (this machine for local processes). */
export function serviceUrl(row: { state: string; port: number | null; published_host: string | null }): string | null {
  if (row.port === null || row.state !== 'running') return null;
  const host = row.published_host ?? '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${row.port}/`;
}
