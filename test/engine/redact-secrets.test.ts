// What a failure reason may quote: secrets out before the quote is cut, never a part of one left,
// and every invisible or control character shown as an escape.
import { describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/engine/docker/service-secrets.js';
import { MAX_QUOTED_CHARS, MAX_REASON_CHARS, publicReason, quotableOutput, redactSecrets } from '../../src/engine/redact-secrets.js';

describe('redactSecrets', () => {
  it('removes the password of a URL with credentials and keeps the rest', () => {
    expect(redactSecrets('connection to postgres://tryton:S3cret-pass@172.17.0.4:5432/tryton failed'))
      .toBe('connection to postgres://tryton:[redacted]@172.17.0.4:5432/tryton failed');
  });

  it('removes the value of password, secret, token and key settings, quoted or not', () => {
    const output = 'db_password=hunter2 PGPASSWORD="two words" {"admin_passwd": "x1y2"} api_key: abc123; secret=\'s\' token=t0k3n&next=1';
    const redacted = redactSecrets(output);
    for (const secret of ['hunter2', 'two words', 'x1y2', 'abc123', "'s'", 't0k3n']) expect(redacted).not.toContain(secret);
    expect(redacted).toContain('db_password=[redacted]');
    expect(redacted).toContain('"admin_passwd": [redacted]');
    expect(redacted).toContain('&next=1');
  });

  it('removes our token and webhook secret formats and the known secrets it is given', () => {
    const redacted = redactSecrets('used tinf_0123456789abcdefABCDEF and whsec_c2VjcmV0c2VjcmV0 with mailpass-9f8e7d', ['mailpass-9f8e7d']);
    expect(redacted).toBe('used [redacted] and [redacted] with [redacted]');
  });

  it('leaves a reason without secrets as it was', () => {
    const reason = 'The container exited (code 3) before answering its health check; its last output was "boom: bad release".';
    expect(redactSecrets(reason, ['', null, 'abc'])).toBe(reason);
  });
});

describe('quotableOutput', () => {
  it('keeps a line whole up to the bound, and past it cuts at a space so no word is left in part', () => {
    expect(quotableOutput('short line')).toBe('short line');
    const secret = generateSecret();
    const line = `${'w '.repeat((MAX_QUOTED_CHARS - 10) / 2)}${secret} tail`;
    const quoted = quotableOutput(line);
    expect(quoted.length).toBeLessThanOrEqual(MAX_QUOTED_CHARS + 1);
    expect(quoted.endsWith('w\u2026')).toBe(true);
    expect(quoted).not.toContain(secret.slice(0, 6));
    expect(quoted).not.toContain('tail');
  });

  it('drops the first word of a line read from an arbitrary point when it may be a part', () => {
    expect(quotableOutput('rd-1234@db failed: timeout', true)).toBe('\u2026failed: timeout');
  });
});

describe('publicReason', () => {
  const longReason = (output: string) => `The container exited (code 3) before answering its health check; its last output was "${output}".`;

  /** Whether `reason` holds any 6 characters of `secret` in a row (a random 6 is no chance match). */
  const holdsPartOf = (reason: string, secret: string) =>
    Array.from({ length: secret.length - 5 }, (_, start) => secret.slice(start, start + 6)).some((part) => reason.includes(part));

  it('takes out a generated secret wherever it straddles a cut, leaving none of it', () => {
    const secret = generateSecret();
    // From where the new cut falls to where the line was cut (300) before it was redacted.
    for (let pad = 240; pad <= 300; pad++) {
      const reason = publicReason(longReason(`${'x'.repeat(pad)} admin password ${secret} refused; then ${'y'.repeat(400)}`), [secret]);
      expect(reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
      expect(holdsPartOf(reason, secret), reason).toBe(false);
      expect(reason).toMatch(/ \[…\] y+"\.$/);
    }
    expect(publicReason(longReason(`admin password ${secret} refused; then ${'y'.repeat(400)}`), [secret])).toContain('admin password [redacted] refused');
  });

  it('takes out a URL password and a setting that straddle the cut, with no known secrets given', () => {
    const secret = generateSecret();
    for (let pad = 240; pad <= 300; pad += 4) {
      const url = publicReason(longReason(`${'x'.repeat(pad)} postgres://tryton:${secret}@db:5432/tryton ${'y'.repeat(400)}`));
      const setting = publicReason(longReason(`${'x'.repeat(pad)} PGPASSWORD=${secret} ${'y'.repeat(400)}`));
      for (const reason of [url, setting]) expect(holdsPartOf(reason, secret), reason).toBe(false);
    }
    expect(publicReason(longReason(`postgres://tryton:${secret}@db:5432/tryton ${'y'.repeat(400)}`))).toContain('postgres://tryton:[redacted]@db');
  });

  it('never cuts inside a [redacted] or an escape, and shows escapes for what a terminal or a reader would not see', () => {
    for (let pad = 230; pad < 300; pad++) {
      const reason = publicReason(longReason(`${'x'.repeat(pad)}\u001b[31m\u202e\u{E0041}token=abc123456789 ${'y'.repeat(400)}`));
      expect(reason).not.toMatch(/[\u001b\u202e\u{E0041}]/u);
      expect(reason).not.toMatch(/\[redac(?!ted\])|\\(?:x.?|u\{?[0-9a-f]{0,3}) \[…\]/);
      expect(reason.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
    }
    expect(publicReason('boom \u001b[31mred\u001b[0m \u202efdp.exe')).toBe('boom \\x1b[31mred\\x1b[0m \\u202efdp.exe');
  });

  it('leaves a short reason without secrets as it was', () => {
    const reason = longReason('boom: bad release');
    expect(publicReason(reason)).toBe(reason);
  });
});
