// The names a team may give a service, and the slugs platform names are made of.
import { describe, expect, it } from 'vitest';
import { checkDomainName } from '../../../src/engine/domains/domain-name.js';
import { nameSlug } from '../../../src/engine/domains/platform-name.js';

describe('checkDomainName', () => {
  it('gives the ASCII form in lower case without a final dot', () => {
    expect(checkDomainName(' ERP.Example.com. ')).toBe('erp.example.com');
    expect(checkDomainName('bücher.example.org')).toBe('xn--bcher-kva.example.org');
    expect(checkDomainName('пример.испытание')).toBe('xn--e1afmkfd.xn--80akhbyknj4f');
  });

  it('accepts 63-character labels and 253 characters in all, and nothing longer', () => {
    const label = 'a'.repeat(63);
    const longest = `${label}.${label}.${label}.${'b'.repeat(57)}.com`;
    expect(longest).toHaveLength(253);
    expect(checkDomainName(longest)).toBe(longest);
    expect(() => checkDomainName(`c${longest}`)).toThrow('longer than 253 characters');
    expect(() => checkDomainName(`${label}a.example.com`)).toThrow('not 1 to 63');
  });

  it('refuses wildcards, IP addresses, single labels, bad labels and names no CA issues for', () => {
    expect(() => checkDomainName('*.example.com')).toThrow('wildcard');
    expect(() => checkDomainName('a.*.example.com')).toThrow('wildcard');
    expect(() => checkDomainName('203.0.113.7')).toThrow('IP address');
    expect(() => checkDomainName('[2001:db8::1]')).toThrow('IP address');
    expect(() => checkDomainName('intranet')).toThrow('single label');
    expect(() => checkDomainName('shop_1.example.com')).toThrow('label "shop_1"');
    expect(() => checkDomainName('a..example.com')).toThrow();
    expect(() => checkDomainName('shop-.example.com')).toThrow('label "shop-"');
    expect(() => checkDomainName('erp.localhost')).toThrow('local or reserved');
    expect(checkDomainName('erp.localhost', { allowLocal: true })).toBe('erp.localhost');
  });
});

describe('nameSlug', () => {
  it('makes a DNS label of a service name', () => {
    expect(nameSlug('Café Shop (EU)')).toBe('cafe-shop-eu');
    expect(nameSlug('---')).toBe('service');
    expect(nameSlug('x'.repeat(80))).toHaveLength(40);
  });
});
