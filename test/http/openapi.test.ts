// The OpenAPI document: valid OpenAPI 3.1 by a real validator, committed as a snapshot so the
// public surface never changes silently, and true: every documented operation answers with a
// status the document lists, and what the server answers (statuses, headers, bodies) is checked
// against it, here on purpose and, through startTestServer(), after every suite that speaks REST.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { catalog } from '../../tools/index.js';
import { answersWithOperation } from '../../src/core/capability.js';
import { addHistory, requestFor, sampleInput, type SeededWithHistory } from '../support/catalog-samples.js';
import type { Exchange } from '../support/exchange-recorder.js';
import { makeToken, seedTeam, startTestServer, type TestServer } from '../support/fixtures.js';
import { OpenApiConformance } from '../support/openapi-conformance.js';

describe('GET /docs/api.json', () => {
  let server: TestServer;
  let document: Record<string, any>;
  beforeAll(async () => {
    server = await startTestServer();
    const response = await fetch(`${server.baseUrl}/docs/api.json`);
    expect(response.status).toBe(200);
    document = (await response.json()) as Record<string, any>;
  });
  afterAll(async () => { await server.close(); });

  it('is served without a token as JSON', async () => {
    const response = await fetch(`${server.baseUrl}/docs/api.json`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('matches the committed snapshot', async () => {
    await expect(JSON.stringify(document, null, 2) + '\n').toMatchFileSnapshot('../snapshots/openapi.json');
  });

  it('declares in its tag list every tag an operation carries', () => {
    const declared = new Set((document.tags as { name: string }[]).map((tag) => tag.name));
    const used = Object.values(document.paths as Record<string, Record<string, { tags: string[] }>>)
      .flatMap((item) => Object.values(item).flatMap((operation) => operation.tags));
    expect(used.filter((tag) => !declared.has(tag))).toEqual([]);
    expect(document.paths['/api/decisions'].post.tags).toEqual(['Decisions']);
  });

  it('documents 408 and 431 on every operation, and 414 on every operation with a path parameter', () => {
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['408', '431']));
        if (path.includes('{')) expect(statuses, `${method} ${path}`).toContain('414');
      }
    }
  });

  it('documents every error status docs/rest-api.md lists', () => {
    const readme = readFileSync(join(packageRoot, 'docs', 'rest-api.md'), 'utf8');
    const listed = [...readme.matchAll(/^\| (\d{3}) \| `[a-z_]+` \|/gm)].map((match) => match[1] as string);
    expect(listed.length).toBeGreaterThan(10);
    const documented = new Set(Object.values(document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)
      .flatMap((item) => Object.values(item).flatMap((operation) => Object.keys(operation.responses))));
    expect([...new Set(listed)].filter((status) => !documented.has(status))).toEqual([]);
  });

  it('documents every capability with its permission and error responses', () => {
    for (const capability of catalog) {
      const operation = document.paths[capability.http.path]?.[capability.http.method.toLowerCase()];
      expect(operation, capability.name).toBeDefined();
      expect(operation.operationId).toBe(capability.name);
      expect(operation['x-permission']).toBe(capability.permission);
      expect(Object.keys(operation.responses)).toContain('401');
      if (capability.permission) expect(operation.responses['403'].content['application/problem+json']).toBeDefined();
    }
  });

  it('answers every documented operation, with a valid token, with a status the document lists', async () => {
    const team: SeededWithHistory = await addHistory(server.app, await seedTeam(server.app));
    const token = await makeToken(server.app, team.teamId);
    for (const capability of catalog) {
      const { path, body } = requestFor(capability, sampleInput(capability, team));
      const response = await fetch(server.baseUrl + path, {
        method: capability.http.method,
        headers: { Authorization: `Bearer ${token.value}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body,
      });
      const listed = Object.keys(document.paths[capability.http.path][capability.http.method.toLowerCase()].responses);
      expect(listed, `${capability.name} answered ${response.status}`).toContain(String(response.status));
    }
  });

  it('declares 406, 415 and 416 where the server answers them', () => {
    const statuses = (path: string, method: string) => Object.keys(document.paths[path][method].responses);
    expect(statuses('/api/service-erp', 'get')).toContain('406');
    expect(statuses('/api/service-erp/{service_id}/start', 'post')).toEqual(expect.arrayContaining(['406', '413', '415']));
    expect(statuses('/api/service-erp/{service_id}', 'delete')).toEqual(expect.arrayContaining(['413', '415']));
    expect(statuses('/api/backups/{backup_id}/download', 'get')).toContain('416');
    // A download answers with its file whatever Accept says.
    expect(statuses('/api/backups/{backup_id}/download', 'get')).not.toContain('406');
    expect(document.paths['/api/backups/{backup_id}/download'].get.responses['416'].headers['Content-Range'].required).toBe(true);
  });

  it('declares Idempotency-Key on the actions that queue or hold an operation and on asking a decision, and the body optional where no field of it is required', () => {
    for (const capability of catalog) {
      const operation = document.paths[capability.http.path][capability.http.method.toLowerCase()];
      const refs = (operation.parameters as { $ref?: string }[]).map((parameter) => parameter.$ref);
      expect(refs.includes('#/components/parameters/IdempotencyKey'), capability.name).toBe(answersWithOperation(capability) || capability.http.idempotencyKey === true);
    }
    expect(document.paths['/api/decisions'].post.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(document.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(document.paths['/api/service-erp/{service_id}/start'].post.requestBody.required).toBe(false);
    expect(document.paths['/api/backups/{backup_id}/restore'].post.requestBody.required).toBe(false);
    expect(document.paths['/api/servers'].post.requestBody.required).toBe(true);
  });

  it('declares the 202 and the permission besides of an action answered at once that can be held for approval', () => {
    const set = document.paths['/api/service-erp/{service_id}/backup-schedule'].put;
    expect(set['x-permission']).toBe('backups:create');
    expect(set['x-destructive-permission']).toBe('backups:delete');
    expect(Object.keys(set.responses)).toEqual(expect.arrayContaining(['200', '202', '403']));
    expect(Object.keys(set.responses['202'].headers).sort()).toEqual(['Location', 'RateLimit', 'RateLimit-Policy']);
    expect(set.responses['202'].content['application/json'].schema.properties).toHaveProperty('decision_id');
  });

  it('declares Location, RateLimit, RateLimit-Policy, Retry-After and WWW-Authenticate where they are sent', () => {
    const start = document.paths['/api/service-erp/{service_id}/start'].post.responses;
    expect(Object.keys(start['202'].headers).sort()).toEqual(['Location', 'RateLimit', 'RateLimit-Policy']);
    expect(Object.keys(start['401'].headers)).toContain('WWW-Authenticate');
    expect(Object.keys(start['429'].headers)).toContain('Retry-After');
    expect(Object.keys(document.paths['/api/service-erp'].get.responses['200'].headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy']);
    for (const name of ['Location', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'WWW-Authenticate']) {
      expect(document.components.headers[name]?.schema, name).toBeDefined();
    }
  });

  it('describes the 406, 415 and 416 the server answers, headers and bodies included', async () => {
    const team = await addHistory(server.app, await seedTeam(server.app));
    const token = (await makeToken(server.app, team.teamId)).value;
    const auth = { Authorization: `Bearer ${token}` };
    const answers = await Promise.all([
      fetch(`${server.baseUrl}/api/service-erp`, { headers: { ...auth, Accept: 'text/html' } }),
      fetch(`${server.baseUrl}/api/service-erp/${team.serviceIds[0]}/start`, {
        method: 'POST', headers: { ...auth, 'Content-Type': 'application/xml' }, body: '<start/>',
      }),
      fetch(`${server.baseUrl}/api/backups/${team.backupId}/download`, { headers: { ...auth, Range: 'bytes=999999-' } }),
    ]);
    expect(answers.map((response) => response.status)).toEqual([406, 415, 416]);
    const checker = new OpenApiConformance(document);
    for (const [index, response] of answers.entries()) {
      const path = ['/api/service-erp', `/api/service-erp/${team.serviceIds[0]}/start`, `/api/backups/${team.backupId}/download`][index]!;
      const text = await response.text();
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => { headers[name] = value; });
      const exchange: Exchange = { method: index === 1 ? 'POST' : 'GET', path, status: response.status, headers, body: text === '' ? undefined : text };
      expect(checker.violationsOf(exchange), `${exchange.method} ${path}`).toEqual([]);
    }
  });

  it('reports an answer whose status, headers or body the document does not describe', async () => {
    const checker = new OpenApiConformance(document);
    const answer = (status: number, headers: Record<string, string>, body?: unknown): Exchange => ({
      method: 'GET', path: '/api/servers', status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const rate = { ratelimit: '"per-token";r=9;t=60', 'ratelimit-policy': '"per-token";q=10;w=60' };
    const page = { data: [], next_cursor: null };
    expect(checker.violationsOf(answer(200, rate, page))).toEqual([]);
    expect(checker.violationsOf(answer(418, rate, page))).toEqual(['GET /api/servers answered 418, a status the document does not list']);
    expect(checker.violationsOf(answer(200, { ...rate, 'x-debug': '1' }, page)))
      .toEqual(['GET /api/servers answered 200 with a x-debug header the document does not declare']);
    expect(checker.violationsOf(answer(200, rate, { items: [] }))[0]).toMatch(/^GET \/api\/servers answered 200 with a body that does not match its schema/);
    expect(checker.violationsOf(answer(200, { ...rate, 'content-type': 'text/html' }, page)))
      .toEqual(['GET /api/servers answered 200 with a text/html body, a media type the document does not declare for it']);
    const problem = { type: 'urn:teaminfra:problem:invalid_token', title: 'Invalid token', status: 401, detail: 'x', code: 'invalid_token' };
    expect(checker.violationsOf(answer(401, { 'content-type': 'application/problem+json' }, problem)))
      .toEqual(['GET /api/servers answered 401 without the www-authenticate header the document requires']);
    // Paths and methods the document does not have are not its business.
    expect(checker.violationsOf({ ...answer(418, {}), path: '/panel' })).toEqual([]);
  });

  it('serves interactive documentation from local files, with no CDN', async () => {
    const page = await (await fetch(`${server.baseUrl}/docs`)).text();
    expect(page).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(page).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${server.baseUrl}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});
