// Content negotiation of the REST API: JSON unless the Accept header rules it out.
import { describe, expect, it } from 'vitest';
import { acceptsJson } from '../../src/http/accept.js';

describe('acceptsJson', () => {
  it('accepts when the header is absent, empty, or allows JSON by any range', () => {
    for (const accept of [undefined, '', 'application/json', 'application/*', '*/*', 'text/html, */*;q=0.1',
      'application/problem+json', 'application/json; charset=utf-8', 'APPLICATION/JSON']) {
      expect(acceptsJson(accept), String(accept)).toBe(true);
    }
  });

  it('refuses when JSON has a weight of zero, even if a wider range allows it', () => {
    for (const accept of ['application/json;q=0', 'application/json;q=0, application/problem+json;q=0, */*',
      '*/*;q=0', 'application/*;q=0.0', 'application/json; q=0.000']) {
      expect(acceptsJson(accept), accept).toBe(false);
    }
  });

  it('refuses when no range matches JSON', () => {
    expect(acceptsJson('text/html')).toBe(false);
    expect(acceptsJson('text/*, image/png')).toBe(false);
  });

  it('lets the most specific range decide when ranges disagree', () => {
    expect(acceptsJson('*/*;q=0, application/json')).toBe(true);
    expect(acceptsJson('application/*;q=0, application/json;q=0.5')).toBe(true);
    expect(acceptsJson('application/json;q=0, application/*;q=1')).toBe(true); // problem+json still matches application/*
  });

  it('ignores a range it cannot read', () => {
    expect(acceptsJson('application/json;q=2')).toBe(true);
    expect(acceptsJson('text/html, application/json;q=abc')).toBe(false);
  });
});
