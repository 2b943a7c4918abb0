// An outgoing mail relay as one URI, `smtp://user:password@host:port`, for apps that take their
// relay that way (trytond's [email] uri, read with unquote_plus). User and password are
// percent-encoded, so a generated password with `@`, `:` or `+` stays one password. No relay
// is the empty string: the app has nowhere to send.
export function smtpUri(relay: { host: string; port: number; user?: string | null; password?: string | null } | null): string {
  if (!relay) return '';
  const login = relay.user ? `${encodeURIComponent(relay.user)}${relay.password ? `:${encodeURIComponent(relay.password)}` : ''}@` : '';
  const host = relay.host.includes(':') ? `[${relay.host}]` : relay.host;
  return `smtp://${login}${host}:${relay.port}`;
}
