// A service's address, shown as `url` in its view and its events.
/**
 * Where a running service answers: its first name over HTTPS when its server's proxy serves it
 * (the port named unless it is 443), else its port on its server's host (this machine for local processes).
 */
export function serviceUrl(row: { state: string; port: number | null; published_host: string | null; proxy_upstream: string | null }): string | null {
  if (row.port === null || row.state !== 'running') return null;
  const host = row.published_host ?? '127.0.0.1';
  if (row.proxy_upstream !== null) return `https://${host}${row.port === 443 ? '' : `:${row.port}`}/`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${row.port}/`;
}
