// What a failure reason may quote of a program's output, with its secrets taken out. A reason is
// read by every token with services:read, so a database URL with its password, a
// `password=...` setting or the value of a secret we gave the service must never be stored in
// one (an image that fails at start often prints its whole configuration).
const REDACTED = '[redacted]';

/** scheme://user:password@host: the password. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):[^\s@/]*@/gi;

/** password=..., "password": "...", PGPASSWORD=..., api_key: ..., with or without quotes. */
const SECRET_SETTING = /(["']?)([\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[\w.-]*)\1(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"')}\]]+)/gi;

/** Our own token and webhook-secret formats, wherever they appear. */
const OUR_SECRETS = /\b(?:tinf|whsec)_[A-Za-z0-9+/=_-]{8,}/g;

/** Known values shorter than this are not searched for: they would match ordinary words. */
const SHORTEST_KNOWN_SECRET = 6;

export function redactSecrets(text: string, knownSecrets: readonly (string | null | undefined)[] = []): string {
  let redacted = text;
  for (const secret of knownSecrets) {
    if (secret && secret.length >= SHORTEST_KNOWN_SECRET) redacted = redacted.split(secret).join(REDACTED);
  }
  return redacted
    .replace(URL_CREDENTIALS, `$1:${REDACTED}@`)
    .replace(SECRET_SETTING, (_match, quote: string, key: string, separator: string) => `${quote}${key}${quote}${separator}${REDACTED}`)
    .replace(OUR_SECRETS, REDACTED);
}
