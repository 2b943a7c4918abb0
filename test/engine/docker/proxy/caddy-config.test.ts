// The proxy's configuration as a pure function of the routes and settings: what Caddy is told.
import { describe, expect, it } from 'vitest';
import { buildCaddyConfig, coversName, type ProxyConfigInput } from '../../../../src/engine/docker/proxy/caddy-config.js';
import { verdictsOf } from '../../../../src/engine/docker/proxy/certificate-readings.js';
import { heldUpstreamName, isHeldUpstream } from '../../../../src/engine/docker/proxy/held-upstream.js';

const input = (overrides: Partial<ProxyConfigInput> = {}): ProxyConfigInput => ({
  routes: [
    { hostnames: ['shop.apps.example.com', 'erp.shop.example'], upstream: 'teaminfra-s1:8000', healthPath: '/health' },
    { hostnames: ['books.apps.example.com'], upstream: 'teaminfra-s2:8080', healthPath: '/up' },
  ],
  acme: { directoryUrl: 'https://acme.example/dir', email: 'ops@example.com', caRootFile: null, accountKeyPem: null, renewIntervalSeconds: null, renewalWindowRatio: null },
  publicHttpsPort: 443,
  operatorCertificates: [],
  ...overrides,
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('buildCaddyConfig', () => {
  it('gives the same document for the same routes in any order', () => {
    const reversed = input({ routes: [...input().routes].reverse() });
    expect(JSON.stringify(buildCaddyConfig(reversed))).toBe(JSON.stringify(buildCaddyConfig(input())));
  });

  it('asks ACME for every name, with both challenges, unless an operator certificate covers it', () => {
    const config = buildCaddyConfig(input({ operatorCertificates: [{ certificatePem: 'C', keyPem: 'K', hostnames: ['erp.shop.example'] }] })) as Json;
    const policy = config.apps.tls.automation.policies[0];
    expect(policy.subjects).toEqual(['books.apps.example.com', 'shop.apps.example.com']);
    expect(policy.issuers[0]).toMatchObject({ module: 'acme', ca: 'https://acme.example/dir', email: 'ops@example.com',
      challenges: { http: { disabled: false }, 'tls-alpn': { disabled: false } } });
    expect(config.apps.tls.certificates.load_pem).toEqual([{ certificate: 'C', key: 'K' }]);
  });

  it('lets a wildcard certificate cover one label under it, and no more', () => {
    expect(coversName('*.apps.example.com', 'shop.apps.example.com')).toBe(true);
    expect(coversName('*.apps.example.com', 'apps.example.com')).toBe(false);
    expect(coversName('*.apps.example.com', 'a.shop.apps.example.com')).toBe(false);
    const config = buildCaddyConfig(input({ operatorCertificates: [{ certificatePem: 'C', keyPem: 'K', hostnames: ['*.apps.example.com'] }] })) as Json;
    expect(config.apps.tls.automation.policies[0].subjects).toEqual(['erp.shop.example']);
  });

  it('redirects the server\'s names to HTTPS on its published port, and refuses other names', () => {
    const config = buildCaddyConfig(input({ publicHttpsPort: 8443 })) as Json;
    const [redirect, fallback] = config.apps.http.servers.http.routes;
    expect(redirect.handle[0]).toMatchObject({ status_code: 308, headers: { Location: ['https://{http.request.host}:8443{http.request.uri}'] } });
    expect(fallback.handle[0].status_code).toBe(404);
    const https = config.apps.http.servers.https;
    expect(https.strict_sni_host).toBe(true);
    expect(https.routes.at(-1).handle[0].status_code).toBe(421);
    expect(https.routes[1].handle[0].response.set['Strict-Transport-Security']).toEqual(['max-age=31536000']);
    expect(https.routes[1].handle[1]).toMatchObject({ upstreams: [{ dial: 'teaminfra-s1:8000' }], load_balancing: { try_duration: '10s' } });
    expect(https.routes[1].handle[1]).not.toHaveProperty('health_checks');
  });

  it('holds requests up to 60 s for a name a restore holds them on, and 10 s for a container\'s', () => {
    const held = input({ routes: [{ hostnames: ['shop.apps.example.com'], upstream: `${heldUpstreamName('svc_1')}:8000`, healthPath: '/health' }] });
    const https = (buildCaddyConfig(held) as Json).apps.http.servers.https;
    const proxying = https.routes.flatMap((route: Json) => route.handle ?? []).filter((handler: Json) => handler.handler === 'reverse_proxy');
    expect(proxying).toEqual([expect.objectContaining({ upstreams: [{ dial: 'teaminfra-svc_1-restored:8000' }], load_balancing: { try_duration: '60s', try_interval: '250ms' } })]);
    expect(isHeldUpstream('teaminfra-svc_1-r2-erp:8000')).toBe(false);
    expect(isHeldUpstream('restored:8000')).toBe(false);
  });

  it('sets renewal timing only when asked (tests make a certificate due at once)', () => {
    expect((buildCaddyConfig(input()) as Json).apps.tls.automation.renew_interval).toBeUndefined();
    const due = buildCaddyConfig(input({ acme: { ...input().acme, renewIntervalSeconds: 2, renewalWindowRatio: 0.99 } })) as Json;
    expect(due.apps.tls.automation.renew_interval).toBe('2s');
    expect(due.apps.tls.automation.policies[0].renewal_window_ratio).toBe(0.99);
  });
});

describe('verdictsOf', () => {
  it('reads failures and successes per name from Caddy\'s log lines', () => {
    const log = [
      '{"level":"error","ts":100.5,"logger":"tls.obtain","msg":"could not get certificate from issuer","identifier":"a.test","error":"HTTP 400 urn:ietf:params:acme:error:dns - no such host"}',
      '{"level":"info","ts":101,"logger":"http","msg":"unrelated"}',
      'not json',
      '{"level":"info","ts":160,"logger":"tls.obtain","msg":"certificate obtained successfully","identifier":"a.test"}',
      '{"level":"info","ts":170,"logger":"tls.renew","msg":"certificate renewed successfully","identifier":"b.test"}',
    ].join('\n');
    expect(verdictsOf(log)).toEqual([
      { name: 'a.test', at: 100_500, ok: false, error: 'HTTP 400 urn:ietf:params:acme:error:dns - no such host', renewal: false },
      { name: 'a.test', at: 160_000, ok: true, error: null, renewal: false },
      { name: 'b.test', at: 170_000, ok: true, error: null, renewal: true },
    ]);
    expect(verdictsOf(log, 150_000)).toHaveLength(2);
  });
});
