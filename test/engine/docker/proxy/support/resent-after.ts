/**
 * What a client sends again, as browsers do: a request on a keep-alive connection the proxy
 * closed while it was idle (RFC 9112, 9.3.1), and, rarely, a new TLS handshake that meets
 * Caddy's "internal error" alert at the very instant a new configuration takes over (seen once
 * in about ten runs of these suites under load: docs/proxy-and-certificates.md). Both got no
 * answer; a status, 5xx included, is an answer and counts.
 */
export const RESENT_AFTER = ['UND_ERR_SOCKET', 'ECONNRESET', 'ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR'];
