// The Decisions page over plain HTTP against the real server and a real SQLite file: what a
// member sees of a decision, the sentences of a refused answer, expiry before the sweeper runs,
// CSRF, the overview's count, the audit trail, and "Needs approval for" on the token form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam } from '../../src/db/repositories/teams.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { Visitor } from '../support/panel-visitor.js';

const PASSWORD = 'decisions-test-password';

let server: TestServer;
let team: SeededTeam;
let asker: string;

beforeAll(async () => {
  server = await startTestServer();
  team = await seedTeam(server.app);
  await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
  asker = (await makeToken(server.app, team.teamId, { name: 'Release bot', permissions: ['decisions:request'] })).value;
});
afterAll(async () => { await server.close(); });

async function ask(body: Record<string, unknown>, token = asker): Promise<{ id: string }> {
  const response = await fetch(`${server.baseUrl}/api/decisions`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

async function signedIn(email: string): Promise<Visitor> {
  const visitor = new Visitor(server.baseUrl);
  expect((await visitor.signIn(email, PASSWORD)).status).toBe(303);
  return visitor;
}

/** Posts an answer with the CSRF token of a freshly loaded Decisions page. */
async function answer(visitor: Visitor, decisionId: string, value: string) {
  const page = await visitor.request('GET', '/panel/decisions');
  return visitor.request('POST', `/panel/decisions/${decisionId}/answer`, { _csrf: visitor.csrfFrom(page.text), answer: value });
}

const stateOf = async (id: string) =>
  (await server.app.db.kysely.selectFrom('decisions').select(['state', 'answer', 'answered_by_type', 'answered_channel'])
    .where('id', '=', id).executeTakeFirstOrThrow());

describe('GET /panel/decisions', () => {
  it('shows a pending question to a plain member with its context, service, asker, channel, expiry and options', async () => {
    const asked = await ask({ question: 'Ship release 42?', options: ['ship', 'wait'], context: 'Tests pass.\nOne flaky check.', service_id: team.serviceIds[0] });
    const page = await (await signedIn('member@example.com')).request('GET', '/panel/decisions');
    expect(page.status).toBe(200);
    const card = page.text.slice(page.text.indexOf(`data-decision-id="${asked.id}"`));
    expect(card).toContain('Ship release 42?');
    expect(card).toContain('Tests pass.\nOne flaky check.');
    expect(card).toContain('About ERP service <strong>ERP A</strong>');
    expect(card).toContain('Asked by API token <strong>Release bot</strong> over the REST API');
    expect(card).toMatch(/Expires \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(card).toContain('<button type="submit" name="answer" value="ship">ship</button>');
    expect(card).toContain('<button type="submit" name="answer" value="wait">wait</button>');
  });

  it('escapes a question and context made of HTML', async () => {
    await ask({ question: '<script>alert(1)</script> ok?', context: '<img src=x onerror=alert(2)>' });
    const page = await (await signedIn('member@example.com')).request('GET', '/panel/decisions');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; ok?');
    expect(page.text).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
  });

  it('shows a pending decision past its expiry as expired and not answerable, before the sweeper runs', async () => {
    const asked = await ask({ question: 'Too late to answer?', options: ['yes', 'no'] });
    await server.app.db.kysely.updateTable('decisions').set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
      .where('id', '=', asked.id).execute();
    const visitor = await signedIn('member@example.com');
    const page = await visitor.request('GET', '/panel/decisions');
    expect(page.text).not.toContain(`action="/panel/decisions/${asked.id}/answer"`);
    const row = page.text.slice(page.text.indexOf(`<tr data-decision-id="${asked.id}"`));
    expect(row).toMatch(/^[^]*?<td class="state">expired<\/td>/);
    const refused = await answer(visitor, asked.id, 'yes');
    expect(refused.status).toBe(409);
    expect(refused.text).toMatch(/This decision expired at [^<]+ without an answer; ask again if it is still needed\./);
    expect((await stateOf(asked.id)).state).toBe('pending');
  });

  it('counts on the overview only the decisions that can still be answered, linking to the page', async () => {
    const pending = await server.app.db.kysely.selectFrom('decisions').select('id').where('team_id', '=', team.teamId)
      .where('state', '=', 'pending').where('expires_at', '>', new Date().toISOString()).execute();
    const overview = await (await signedIn('member@example.com')).request('GET', '/panel');
    expect(overview.text).toContain(`<a href="/panel/decisions">${pending.length} decisions wait for an answer</a>`);
    expect(overview.text).toContain('<a href="/panel/decisions">Decisions</a>');
  });
});

describe('POST /panel/decisions/{id}/answer', () => {
  it('records a member\'s option through the panel, audits it and names it on the page', async () => {
    const asked = await ask({ question: 'Which day?', options: ['monday', 'friday'] });
    const visitor = await signedIn('member@example.com');
    const answered = await answer(visitor, asked.id, 'friday');
    expect(answered.status).toBe(303);
    expect(answered.location).toBe(`/panel/decisions?answered=${asked.id}`);
    expect(await stateOf(asked.id)).toEqual({ state: 'answered', answer: 'friday', answered_by_type: 'member', answered_channel: 'panel' });
    const page = await visitor.request('GET', answered.location!);
    expect(page.text).toContain('Answered “Which day?”: friday.');
    const row = page.text.slice(page.text.indexOf(`<tr data-decision-id="${asked.id}"`));
    expect(row).toMatch(/^[^]*?<td class="answer">friday<\/td>\s*<td>member@example.com<div class="muted">panel<\/div>/);

    await server.app.audit.flush();
    const member = await server.app.db.kysely.selectFrom('users').select('id').where('email', '=', 'member@example.com').executeTakeFirstOrThrow();
    const audited = await server.app.db.kysely.selectFrom('audit_log').select(['actor_type', 'actor_id', 'channel', 'target_type', 'outcome', 'detail'])
      .where('action', '=', 'answer_decision').where('target_id', '=', asked.id).execute();
    expect(audited).toEqual([{ actor_type: 'user', actor_id: member.id, channel: 'panel', target_type: 'decision', outcome: 'allowed', detail: 'answer: friday' }]);
  });

  it('heads the history with the decision that ended last, even when it was asked first, and names it after the answer', async () => {
    const askedFirst = await ask({ question: 'Rename the staging copy?', options: ['yes', 'no'] });
    const newer: string[] = [];
    for (let i = 0; i < 55; i++) newer.push((await ask({ question: `Routine question ${i}?`, options: ['yes', 'no'] })).id);
    const visitor = await signedIn('member@example.com');
    for (const id of newer) expect((await answer(visitor, id, 'yes')).status).toBe(303);
    const answered = await answer(visitor, askedFirst.id, 'no');
    const page = await visitor.request('GET', answered.location!);
    expect(page.text).toContain('Answered “Rename the staging copy?”: no.');
    const historyIds = [...page.text.matchAll(/<tr data-decision-id="([^"]+)"/g)].map((match) => match[1]);
    expect(historyIds[0]).toBe(askedFirst.id);
    expect(historyIds[1]).toBe(newer.at(-1));
  });

  it('answers 409 with the already-answered sentence when the decision was answered before', async () => {
    const asked = await ask({ question: 'Deploy now?', options: ['yes', 'no'] });
    const owner = await signedIn('owner@example.com');
    const stalePage = await owner.request('GET', '/panel/decisions');
    expect((await answer(await signedIn('member@example.com'), asked.id, 'no')).status).toBe(303);
    const again = await owner.request('POST', `/panel/decisions/${asked.id}/answer`, { _csrf: owner.csrfFrom(stalePage.text), answer: 'yes' });
    expect(again.status).toBe(409);
    expect(again.text).toMatch(/<p class="error" role="alert">This decision was already answered \(&quot;no&quot;\) at [^<]+; it cannot be answered again\.<\/p>/);
    expect((await stateOf(asked.id)).answer).toBe('no');
  });

  it('answers 422 with the options when the answer is not one of them, and leaves it pending', async () => {
    const asked = await ask({ question: 'Pick a colour', options: ['red', 'blue'] });
    const refused = await answer(await signedIn('member@example.com'), asked.id, 'green');
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('The answer must be one of the options: &quot;red&quot;, &quot;blue&quot;.');
    expect((await stateOf(asked.id)).state).toBe('pending');
  });

  it('keeps the typed text and says why when a free-text answer is refused, and stores line breaks as LF', async () => {
    const asked = await ask({ question: 'Anything to add?' });
    const visitor = await signedIn('member@example.com');
    const empty = await answer(visitor, asked.id, '   ');
    expect(empty.status).toBe(422);
    expect(empty.text).toContain('The answer must not be empty.');
    const control = await answer(visitor, asked.id, 'fine\u0007 <b>x</b>');
    expect(control.status).toBe(422);
    expect(control.text).toContain('fine\u0007 &lt;b&gt;x&lt;/b&gt;</textarea>');
    // A browser sends a textarea's line breaks as CRLF; the answer is stored with LF, as through the API.
    expect((await answer(visitor, asked.id, 'Looks good.\r\nShip it.')).status).toBe(303);
    expect(await stateOf(asked.id)).toMatchObject({ state: 'answered', answer: 'Looks good.\nShip it.' });
  });

  it('refuses a form without the CSRF token and leaves the decision pending', async () => {
    const asked = await ask({ question: 'Forged?', options: ['yes', 'no'] });
    const refused = await (await signedIn('member@example.com')).request('POST', `/panel/decisions/${asked.id}/answer`, { answer: 'yes' });
    expect(refused.status).toBe(403);
    expect((await stateOf(asked.id)).state).toBe('pending');
  });

  it('answers 404 for a decision of another team', async () => {
    const other = await insertTeam(server.app.db.kysely, { name: 'Other team', plan: 'starter', timezone: 'UTC' });
    const stranger = (await makeToken(server.app, other, { permissions: ['decisions:request'] })).value;
    const asked = await ask({ question: 'Not yours?', options: ['a', 'b'] }, stranger);
    const visitor = await signedIn('member@example.com');
    expect((await visitor.request('GET', '/panel/decisions')).text).not.toContain('Not yours?');
    const refused = await answer(visitor, asked.id, 'a');
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('This decision does not exist in your team.');
    expect((await stateOf(asked.id)).state).toBe('pending');
  });
});

describe('Needs approval for, on the API Tokens form', () => {
  async function createForm(visitor: Visitor, needsApproval: string[]) {
    const form = await visitor.request('GET', '/panel/developer/api-tokens/new');
    expect(form.text).toContain('<legend>Needs approval for</legend>');
    return visitor.request('POST', '/panel/developer/api-tokens', [
      ['_csrf', visitor.csrfFrom(form.text)], ['name', `Careful ${needsApproval.length}`], ['accepted_by', 'both'], ['access', 'full'],
      ...needsApproval.map((name): [string, string] => ['needs_approval', name]),
    ]);
  }

  it('refuses an action that cannot wait for approval, naming those that can', async () => {
    const refused = await createForm(await signedIn('owner@example.com'), ['restore_backup', 'drop_everything']);
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('&quot;Needs approval for&quot; can name only these actions: Stop an ERP service, Redeploy an ERP service, ' +
      'Delete an ERP service, Restore a backup, Set a backup schedule, Move an ERP service, Roll back a move.');
    // One of them waits only with some inputs, and the form says which.
    expect(refused.text).toContain('Set a backup schedule (only when lowering its retention would remove backups that exist)');
  });

  it('stores the ticked actions, lists them, offers them ticked on Edit access and keeps them when replaced', async () => {
    const visitor = await signedIn('owner@example.com');
    expect((await createForm(visitor, ['stop_erp_service', 'restore_backup'])).status).toBe(201);
    const row = await server.app.db.kysely.selectFrom('api_tokens').select(['id', 'needs_approval']).where('name', '=', 'Careful 2')
      .executeTakeFirstOrThrow();
    expect(row.needs_approval).toBe('stop_erp_service,restore_backup');
    const list = await visitor.request('GET', '/panel/developer/api-tokens');
    expect(list.text).toContain('Needs approval for: Stop an ERP service; Restore a backup');
    const edit = await visitor.request('GET', `/panel/developer/api-tokens/${row.id}/edit`);
    expect(edit.text).toMatch(/value="restore_backup" checked/);
    expect(edit.text).not.toMatch(/value="delete_erp_service" checked/);

    const replace = await visitor.request('GET', `/panel/developer/api-tokens/${row.id}/replace`);
    expect((await visitor.request('POST', `/panel/developer/api-tokens/${row.id}/replace`, { _csrf: visitor.csrfFrom(replace.text) })).status).toBe(201);
    const replacement = await server.app.db.kysely.selectFrom('api_tokens').select('needs_approval').where('name', '=', 'Careful 2')
      .where('revoked_at', 'is', null).executeTakeFirstOrThrow();
    expect(replacement.needs_approval).toBe('stop_erp_service,restore_backup');
  });
});
