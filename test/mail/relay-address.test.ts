// How a relay's host is judged where a service connects to it: a name is resolved once, every
// answer checked against the private ranges, and the address to connect to given back (the
// start pins the service to it). Names are resolved by an injected lookup, as DNS would answer.
import { describe, expect, it } from 'vitest';
import { checkedRelayAddress, type AddressLookup } from '../../src/mail/relay-address.js';

const answering = (...addresses: string[]): AddressLookup => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const failing: AddressLookup = async () => {
  throw Object.assign(new Error('queryA ENOTFOUND relay.example.com'), { code: 'ENOTFOUND' });
};

describe('checkedRelayAddress', () => {
  it('gives the first address a name resolves to when every answer is public', async () => {
    expect(await checkedRelayAddress('relay.example.com', { allowPrivate: false, lookup: answering('93.184.216.34', '2606:2800:220:1::1') }))
      .toBe('93.184.216.34');
  });

  it('refuses a name when any of its answers is private, loopback or link-local', async () => {
    for (const answers of [['127.0.0.1'], ['93.184.216.34', '10.0.0.5'], ['169.254.169.254'], ['::ffff:192.168.1.1'], ['fe80::1']]) {
      await expect(checkedRelayAddress('relay.example.com.', { allowPrivate: false, lookup: answering(...answers) }), answers.join(' ')).rejects.toThrow(
        'The relay host relay.example.com resolves to a private, loopback or link-local address, which is not allowed; the operator can allow it.');
    }
  });

  it('refuses a private address as written, and localhost, without asking DNS', async () => {
    for (const host of ['127.0.0.1', '[::1]', '10.1.2.3', 'localhost', 'mail.localhost']) {
      await expect(checkedRelayAddress(host, { allowPrivate: false, lookup: failing }), host)
        .rejects.toThrow('The relay host is a private, loopback or link-local address, which is not allowed; the operator can allow it.');
    }
    expect(await checkedRelayAddress('[2606:2800:220:1::1]', { allowPrivate: false, lookup: failing })).toBe('2606:2800:220:1::1');
  });

  it('refuses a name that does not resolve, and what is not a host name', async () => {
    await expect(checkedRelayAddress('relay.example.com', { allowPrivate: false, lookup: failing }))
      .rejects.toThrow('The relay host relay.example.com does not resolve to an address.');
    await expect(checkedRelayAddress('relay.example.com', { allowPrivate: false, lookup: answering() }))
      .rejects.toThrow('The relay host relay.example.com does not resolve to an address.');
    await expect(checkedRelayAddress('relay example\r\n.com', { allowPrivate: false, lookup: failing }))
      .rejects.toThrow('The relay host "relay example\r\n.com" is not a host name or an IP address.');
  });

  it('gives a private answer when the operator allows it, and the name itself (null) when it does not resolve here', async () => {
    expect(await checkedRelayAddress('mail.internal', { allowPrivate: true, lookup: answering('10.0.0.25') })).toBe('10.0.0.25');
    expect(await checkedRelayAddress('localhost', { allowPrivate: true, lookup: answering('127.0.0.1') })).toBe('127.0.0.1');
    expect(await checkedRelayAddress('mailhog', { allowPrivate: true, lookup: failing })).toBeNull();
  });
});
