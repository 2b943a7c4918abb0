// Where a name points, asked of TEAMINFRA_DNS_SERVER (a real DNS server here: Pebble's
// challtestsrv), and the sentence a failed certificate's reason becomes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressesOf, certificateFailureReason, resolverFromEnv } from '../../../src/engine/domains/name-lookup.js';
import { pebbleInstalled, startPebble, type Pebble } from '../docker/proxy/support/pebble.js';

describe.runIf(pebbleInstalled)('addressesOf', () => {
  let pebble: Pebble;
  beforeAll(async () => {
    pebble = await startPebble();
  }, 30_000);
  afterAll(async () => {
    await pebble?.stop();
  });

  it('asks the resolver TEAMINFRA_DNS_SERVER names', async () => {
    await pebble.pointName('shop.lookup.test', '203.0.113.7');
    const resolver = resolverFromEnv({ TEAMINFRA_DNS_SERVER: pebble.dnsServer });
    expect(await addressesOf(resolver, 'shop.lookup.test')).toEqual(['203.0.113.7']);
    expect(await addressesOf(resolver, 'nothing.lookup.test')).toEqual([]);
  });
});

describe('certificateFailureReason', () => {
  it('says what to fix: a missing record, a name pointing elsewhere, else the CA\'s words', () => {
    expect(certificateFailureReason('x', [], ['198.51.100.4'])).toBe('The name does not resolve: give it an A or AAAA record pointing at this server (198.51.100.4).');
    expect(certificateFailureReason('x', ['203.0.113.7'], ['198.51.100.4'])).toBe('The name does not point at this server (203.0.113.7); point it at 198.51.100.4.');
    expect(certificateFailureReason('HTTP 400 urn:ietf:params:acme:error:rateLimited - too many certificates', ['198.51.100.4'], ['198.51.100.4']))
      .toBe('The certificate authority refused the name: too many certificates');
  });
});
