// A service's logs and metrics over REST, on the local driver, with a real ERP process: the lines
// it printed come back in order, with tail and a cursor that reads on; reading them needs
// services:logs, reach applies as everywhere, and control and invisible characters come back
// escaped, over REST and MCP alike. Its
// metrics show a running process's memory and data, and a stopped one's state without CPU. An
// operation shows what each of its steps did and how long it took, a failed step with why.
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, problemIn } from '../mcp/clients.js';
import { makeToken, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, send } from '../engine/support/engine-http.js';

describe.skipIf(process.platform !== 'linux')('service logs and metrics on a local server', () => {
  let server: TestServer;
  let team: SeededTeam;
  let token: string;
  let serviceId: string;
  let logFile: string;
  let startOperationId: string;
  const logs = (query = '', bearer = token, id = serviceId) => send(server.baseUrl, 'GET', `/api/service-erp/${id}/logs${query}`, bearer);

  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 50, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    token = (await makeToken(server.app, team.teamId)).value;
    serviceId = team.serviceIds[0];
    const started = await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/start`);
    expect(started).toMatchObject({ state: 'succeeded' });
    startOperationId = started.id;
    logFile = join(server.dataDir, 'servers', team.serverIds[0], serviceId, 'service.log');
    // The process's output is this file (its stdout and stderr); lines appended as it appends them.
    appendFileSync(logFile, Array.from({ length: 30 }, (_, index) => `known line ${index + 1}\n`).join(''));
  }, 60_000);
  afterAll(async () => { await server?.close(); });

  it('answers the latest lines in order, as many as tail asks, after the line the process printed itself', async () => {
    const all = await logs();
    expect(all.status).toBe(200);
    const texts = all.body.lines.map((line: { text: string }) => line.text);
    expect(texts[0]).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\//);
    expect(texts.slice(1)).toEqual(Array.from({ length: 30 }, (_, index) => `known line ${index + 1}`));
    expect(all.body.lines[0]).toMatchObject({ container: null, at: null });
    const tail = await logs('?tail=5');
    expect(tail.body.lines.map((line: { text: string }) => line.text)).toEqual(['known line 26', 'known line 27', 'known line 28', 'known line 29', 'known line 30']);
    expect(tail.body.more).toBe(false);
  });

  it('reads on from a cursor: only what was printed after it, oldest first, page by page', async () => {
    const first = await logs('?tail=1');
    appendFileSync(logFile, 'after 1\nafter 2\nafter 3\n');
    const page = await logs(`?tail=2&since=${encodeURIComponent(first.body.next_cursor)}`);
    expect(page.body.lines.map((line: { text: string }) => line.text)).toEqual(['after 1', 'after 2']);
    expect(page.body.more).toBe(true);
    const rest = await logs(`?since=${encodeURIComponent(page.body.next_cursor)}`);
    expect(rest.body).toMatchObject({ lines: [{ text: 'after 3' }], more: false });
    const none = await logs(`?since=${encodeURIComponent(rest.body.next_cursor)}`);
    expect(none.body).toMatchObject({ lines: [], next_cursor: rest.body.next_cursor, more: false });
  });

  it('escapes control characters and cuts a line longer than the bound, saying so', async () => {
    const before = await logs('?tail=1');
    appendFileSync(logFile, `red \u001b[31malert\u001b[0m\rover\u0007 \u202eevil\n${'x'.repeat(10_000)}\n`);
    const page = await logs(`?since=${encodeURIComponent(before.body.next_cursor)}`);
    expect(page.body.lines[0].text).toBe('red \\x1b[31malert\\x1b[0m\\x0dover\\x07 \\u202eevil');
    expect(page.body.lines[1].text).toBe(`${'x'.repeat(4000)} [line cut: 10000 characters in all]`);
  });

  it('escapes the invisible characters that hide text from a person, over REST and MCP alike', async () => {
    const before = await logs('?tail=1');
    // "rm" in tag characters and a zero-width space: a browser shows nothing, an assistant reads them.
    appendFileSync(logFile, 'ready\u200b\u{E0001}\u{E0072}\u{E006D}\u{E007F} \u2066x\ufeff\n');
    const shown = 'ready\\u200b\\u{e0001}\\u{e0072}\\u{e006d}\\u{e007f} \\u2066x\\ufeff';
    const page = await logs(`?since=${encodeURIComponent(before.body.next_cursor)}`);
    expect(page.body.lines.map((line: { text: string }) => line.text)).toEqual([shown]);
    const mcp = await connectHttp(server.baseUrl, token);
    try {
      const read = await mcp.client.callTool({ name: 'get_erp_service_logs', arguments: { service_id: serviceId, since: before.body.next_cursor } });
      expect((read.structuredContent as { lines: { text: string }[] }).lines.map((line) => line.text)).toEqual([shown]);
      expect(JSON.stringify(read)).not.toMatch(/[\u200b\u2066\ufeff\u{E0000}-\u{E007F}]/u);
    } finally {
      await mcp.close();
    }
  });

  it('moves on past a single line longer than a whole read (2 MiB), answered cut', async () => {
    const before = await logs('?tail=1');
    appendFileSync(logFile, `${'g'.repeat(3 * 1024 * 1024)}\nafter the giant\n`);
    let cursor = before.body.next_cursor as string;
    const texts: string[] = [];
    for (let read = 0; read < 4 && !texts.includes('after the giant'); read++) {
      const page = await logs(`?since=${encodeURIComponent(cursor)}`);
      texts.push(...page.body.lines.map((line: { text: string }) => line.text));
      cursor = page.body.next_cursor;
    }
    expect(texts.at(-1)).toBe('after the giant');
    expect(texts[0]).toMatch(/^g{4000} \[line cut: \d+ characters in all\]$/);
  });

  it('refuses a bad since, and a time on a local server, on the since field', async () => {
    const bad = await logs('?since=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ field: 'since', message: expect.stringContaining('neither a time') }]);
    const time = await logs('?since=2026-01-01T00:00:00Z');
    expect(time.status).toBe(400);
    expect(time.body.errors[0].message).toContain('keeps no time per line');
    expect((await logs('?tail=5001')).status).toBe(400);
  });

  it('refuses a since that starts as a date but is not one on the calendar, on the since field, over REST and MCP', async () => {
    for (const since of ['2026-11-28junk', '2026-02-30', '2026-02-30T10:00:00Z']) {
      const refused = await logs(`?since=${since}`);
      expect(refused.status, since).toBe(400);
      expect(refused.body.errors, since).toEqual([{ field: 'since', message: expect.stringMatching(/^Must be a date/) }]);
    }
    const mcp = await connectHttp(server.baseUrl, token);
    try {
      const refused = await mcp.client.callTool({ name: 'get_erp_service_logs', arguments: { service_id: serviceId, since: '2026-11-28junk' } });
      expect(refused.isError).toBe(true);
      expect(problemIn(refused)?.errors).toEqual([{ field: 'since', message: expect.stringMatching(/^Must be a date/) }]);
    } finally {
      await mcp.close();
    }
  });

  it('needs services:logs, which services:read does not give: the 403 names it', async () => {
    const reader = (await makeToken(server.app, team.teamId, { permissions: ['services:read', 'services:operate', 'services:write'] })).value;
    const refused = await logs('', reader);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_permission', detail: 'This API token does not have the services:logs scope.' });
    const logsOnly = (await makeToken(server.app, team.teamId, { permissions: ['services:logs'] })).value;
    expect((await logs('?tail=1', logsOnly)).status).toBe(200);
  });

  it('answers 404 for a service outside a restricted token\'s reach, and for another team\'s', async () => {
    const restricted = (await makeToken(server.app, team.teamId, { services: [team.serviceIds[1]] })).value;
    expect((await logs('', restricted)).status).toBe(404);
    expect((await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}/metrics`, restricted)).status).toBe(404);
    expect((await logs('', restricted, team.serviceIds[1])).status).toBe(200);
    const other = await seedTeam(server.app, { name: 'Other team' });
    const stranger = (await makeToken(server.app, other.teamId)).value;
    expect((await logs('', stranger)).status).toBe(404);
  });

  it('reading logs and metrics leaves no audit row', async () => {
    await server.app.audit.flush();
    const count = async () => Number((await server.app.db.kysely.selectFrom('audit_log').select((eb) => eb.fn.countAll().as('n'))
      .where('action', 'in', ['get_erp_service_logs', 'get_erp_service_metrics']).where('outcome', '=', 'allowed').executeTakeFirstOrThrow()).n);
    const before = await count();
    await logs();
    await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}/metrics`, token);
    await server.app.audit.flush();
    expect(await count()).toBe(before);
  });

  it('reports a running service\'s memory, CPU and data size, then a stopped one\'s state without CPU', async () => {
    const running = await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}/metrics`, token);
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ state: 'running', running: true, restarts: 0 });
    expect(running.body.memory_bytes).toBeGreaterThan(1_000_000);
    expect(running.body.memory_limit_bytes).toBeGreaterThan(running.body.memory_bytes);
    expect(running.body.data_bytes).toBeGreaterThan(0);
    expect(running.body.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(running.body.cpu.percent).toBeGreaterThanOrEqual(0);
    expect(running.body.cpu.window_seconds).toBeGreaterThanOrEqual(1);
    expect(await act(server.baseUrl, token, 'POST', `/api/service-erp/${serviceId}/stop`)).toMatchObject({ state: 'succeeded' });
    const stopped = await send(server.baseUrl, 'GET', `/api/service-erp/${serviceId}/metrics`, token);
    expect(stopped.body).toMatchObject({ state: 'stopped', running: false, cpu: null, memory_bytes: null, uptime_seconds: null });
    expect(stopped.body.data_bytes).toBeGreaterThan(0);
    expect(readFileSync(logFile, 'utf8')).toContain('stopping');
  });

  it('get_operation shows what each step of an operation did and how long it took', async () => {
    const operation = await send(server.baseUrl, 'GET', `/api/operations/${startOperationId}`, token);
    expect(operation.body.steps.map((step: { step: string }) => step.step))
      .toEqual(['Started the service', expect.stringMatching(/^Chose port \d+$/), 'The process was created']);
    const start = operation.body.steps[0];
    expect(start).toMatchObject({ outcome: 'done', detail: expect.stringMatching(/^revision 1 on port \d+$/) });
    expect(start.duration_ms).toBeGreaterThan(0);
    expect(Date.parse(start.at)).toBeLessThanOrEqual(Date.parse(operation.body.finished_at));
  });

  it('a failed step carries the driver\'s sentence, which is also the operation\'s reason', async () => {
    const created = await act(server.baseUrl, token, 'POST', '/api/service-erp', { server_id: team.serverIds[0], name: 'Broken' });
    expect(created.steps).toEqual([expect.objectContaining({ step: "Prepared the service's files and data", outcome: 'done' })]);
    // A directory where its database should be: the process cannot open it and ends while starting.
    const database = join(server.dataDir, 'servers', team.serverIds[0], created.service_id, 'erp.sqlite');
    rmSync(database, { force: true });
    mkdirSync(database);
    const failed = await act(server.baseUrl, token, 'POST', `/api/service-erp/${created.service_id}/start`);
    expect(failed.state).toBe('failed');
    expect(failed.steps.find((step: { step: string }) => step.step === 'Started the service'))
      .toMatchObject({ outcome: 'failed', detail: failed.reason });
  });
});
