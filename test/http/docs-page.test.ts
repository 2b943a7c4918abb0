// The interactive documentation at /docs and the OpenAPI document: served locally, and never
// inside another site's frame.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/fixtures.js';

let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(async () => { await server.close(); });

describe('GET /docs', () => {
  it('forbids framing with CSP frame-ancestors and X-Frame-Options when a site embeds the page', async () => {
    for (const path of ['/docs', '/docs/']) {
      const response = await fetch(server.baseUrl + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
    }
  });

  it('sends X-Frame-Options on the OpenAPI document and the assets too', async () => {
    for (const path of ['/docs/api.json', '/docs/assets/init.js']) {
      expect((await fetch(server.baseUrl + path)).headers.get('x-frame-options'), path).toBe('DENY');
    }
  });
});
