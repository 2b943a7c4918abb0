// The redirect URI rules on their own (RFC 8252, MCP authorization): what may be registered, and
// how an authorization request's redirect_uri is matched. test/oauth/oauth-routes.test.ts checks
// the same rules through the running server's registration and authorization endpoints.
import { describe, expect, it } from 'vitest';
import { redirectUriMatches, redirectUriRefusal } from '../../src/oauth/redirect-uris.js';

describe('redirectUriRefusal', () => {
  it('accepts a URI when it is https, http to loopback, or an app scheme', () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback', 'https://assistant.example:8443/cb?x=1',
      'http://127.0.0.1:33418/callback', 'http://127.0.0.1/callback', 'http://[::1]:8080/cb', 'http://localhost:6274/oauth/callback',
      'cursor://anysphere.cursor-retrieval/oauth/user-callback', 'vscode://vscode.github-authentication/did-authenticate',
      'com.example.app:/oauth2redirect', 'com.example.app://callback',
    ]) {
      expect(redirectUriRefusal(uri), uri).toBeUndefined();
    }
  });

  it('refuses http when the host is not this machine', () => {
    for (const uri of ['http://evil.example/cb', 'http://localhost.evil.example/cb', 'http://127.0.0.1.nip.io/cb', 'http://10.0.0.5/cb']) {
      expect(redirectUriRefusal(uri), uri).toMatch(/uses http to a host other than this machine/);
    }
  });

  it('refuses a URI when its scheme has a meaning of its own in browsers or systems', () => {
    for (const uri of ['javascript:alert(1)', 'JavaScript://x/%0aalert(1)', 'data:text/html,<script>1</script>', 'file:///etc/passwd',
      'blob:https://x/1', 'about:blank', 'vbscript:msgbox', 'ws://127.0.0.1/cb', 'mailto:a@example.com']) {
      expect(redirectUriRefusal(uri), uri).toMatch(/scheme, which is not an app's own/);
    }
  });

  it('refuses a URI when it is relative, has a fragment, or carries a user name', () => {
    expect(redirectUriRefusal('/callback')).toMatch(/not an absolute URI/);
    expect(redirectUriRefusal('callback')).toMatch(/not an absolute URI/);
    expect(redirectUriRefusal('https://assistant.example/cb#x')).toMatch(/fragment/);
    expect(redirectUriRefusal('https://assistant.example/cb#')).toMatch(/fragment/);
    expect(redirectUriRefusal('https://user:secret@assistant.example/cb')).toMatch(/user name or password/);
  });
});

describe('redirectUriMatches', () => {
  it('matches when the requested URI is the registered one, character for character', () => {
    expect(redirectUriMatches('https://assistant.example/cb', 'https://assistant.example/cb')).toBe(true);
    expect(redirectUriMatches('cursor://anysphere.cursor-retrieval/cb', 'cursor://anysphere.cursor-retrieval/cb')).toBe(true);
  });

  it('matches a loopback http URI when only the port differs (RFC 8252 §7.3)', () => {
    expect(redirectUriMatches('http://127.0.0.1/callback', 'http://127.0.0.1:51234/callback')).toBe(true);
    expect(redirectUriMatches('http://localhost:3000/callback', 'http://localhost:4000/callback')).toBe(true);
    expect(redirectUriMatches('http://[::1]:3000/cb', 'http://[::1]:4000/cb')).toBe(true);
  });

  it('does not match when anything else differs', () => {
    for (const [registered, requested] of [
      ['https://assistant.example/cb', 'https://assistant.example/cb/'],
      ['https://assistant.example/cb', 'https://assistant.example:8443/cb'],
      ['https://assistant.example/cb', 'https://assistant.example/cb?x=1'],
      ['https://assistant.example/cb', 'https://ASSISTANT.example/cb'],
      ['http://127.0.0.1:3000/callback', 'http://127.0.0.1:3000/other'],
      ['http://127.0.0.1:3000/callback', 'http://localhost:3000/callback'],
      ['http://127.0.0.1:3000/callback', 'https://127.0.0.1:3000/callback'],
      ['cursor://anysphere.cursor-retrieval/cb', 'cursor://anysphere.cursor-retrieval/cb2'],
    ] as const) {
      expect(redirectUriMatches(registered, requested), `${registered} / ${requested}`).toBe(false);
    }
  });
});
