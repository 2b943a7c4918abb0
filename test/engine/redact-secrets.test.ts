import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/engine/redact-secrets.js';

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
