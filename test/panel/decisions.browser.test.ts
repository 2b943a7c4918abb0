// The Decisions page in headless Chromium, with the engine running: a restore asked by a token
// that needs approval waits until a member approves it in the panel, then runs; a member answers
// a free-text question and a second answer gets a sentence; a token made on the API Tokens page
// with "Needs approval for" is held, and a denial in the panel fails its operation.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickAndLoad, launchHeadless, signInToPanel } from '../support/browser.js';
import { makeToken, seedMembers, seedTeam, startTestServer, type SeededTeam, type TestServer } from '../support/fixtures.js';
import { act, killProcessesMatching, send, waitForOperation } from '../engine/support/engine-http.js';
import { countProducts, deleteProducts, serviceDatabase } from '../engine/support/service-data.js';

const PASSWORD = 'decisions-browser-password';

describe('Decisions in headless Chromium', () => {
  let server: TestServer;
  let team: SeededTeam;
  let browser: Browser;
  let full: string;
  beforeAll(async () => {
    server = await startTestServer({ engine: { pollMs: 100, reconcileIntervalMs: 0 } }, {}, { engine: true });
    team = await seedTeam(server.app);
    await seedMembers(server.app, team.teamId, PASSWORD, ['owner', 'member']);
    full = (await makeToken(server.app, team.teamId)).value;
    browser = await launchHeadless();
  });
  afterAll(async () => {
    await browser?.close();
    const dataDir = server?.dataDir;
    await server?.close();
    if (dataDir) expect(await killProcessesMatching(dataDir)).toBe(0);
  });

  const signIn = (email: string): Promise<Page> => signInToPanel(browser, server.baseUrl, email, PASSWORD);
  const card = (page: Page, decisionId: string) => page.locator(`section[data-decision-id="${decisionId}"]`);
  const historyRow = (page: Page, decisionId: string) => page.locator(`tr[data-decision-id="${decisionId}"]`);

  it('holds a restore by a token that needs approval (202, awaiting_approval), runs it once a member approves it in the panel', async () => {
    const serviceId = team.serviceIds[0];
    expect(await act(server.baseUrl, full, 'POST', `/api/service-erp/${serviceId}/start`)).toMatchObject({ state: 'succeeded', reason: null });
    const backedUp = await act(server.baseUrl, full, 'POST', `/api/service-erp/${serviceId}/backups`);
    expect(backedUp).toMatchObject({ state: 'succeeded', reason: null });
    const backupId = backedUp.backup_id as string;
    const database = serviceDatabase(server.dataDir, team.serverIds[0], serviceId);
    deleteProducts(database, 2);

    const agent = await makeToken(server.app, team.teamId, { name: 'Restore agent', permissions: ['backups:restore'], needsApproval: ['restore_backup'] });
    const held = await send(server.baseUrl, 'POST', `/api/backups/${backupId}/restore`, agent.value);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ kind: 'restore', state: 'awaiting_approval', service_id: serviceId, decision_id: expect.stringMatching(/^dec_/) });
    const decisionId = held.body.decision_id as string;

    const page = await signIn('member@example.com');
    expect((await page.locator('.pending-decisions').textContent())?.trim()).toBe('1 decision waits for an answer');
    await clickAndLoad(page, 'nav >> text=Decisions');
    const pending = card(page, decisionId);
    const text = (await pending.textContent()) ?? '';
    expect(text).toContain('The API token "Restore agent" asks to restore a backup');
    expect(text).toContain(`Action: Restore a backup restore_backup on backup ${backupId} into ERP service ERP A`);
    expect(text).toContain(`operation ${held.body.id} (awaiting_approval)`);
    expect(text).toContain('Asked by API token Restore agent over the REST API');
    // Nothing ran while it waited.
    expect(countProducts(database)).toBe(2);
    expect((await send(server.baseUrl, 'GET', `/api/operations/${held.body.id}`, full)).body.state).toBe('awaiting_approval');

    await clickAndLoad(page, pending.locator('button[value=approve]'));
    expect(await page.locator('.notice[role=status]').textContent()).toContain('Answered “The API token');
    expect(await card(page, decisionId).count()).toBe(0);
    expect(await waitForOperation(server.baseUrl, full, held.body.id)).toMatchObject({ state: 'succeeded', reason: null, decision_id: decisionId });
    expect(countProducts(database)).toBe(5);

    await page.reload();
    const row = (await historyRow(page, decisionId).textContent()) ?? '';
    expect(row).toContain('approve');
    expect(row).toContain('member@example.com');
    expect(row).toContain(`operation ${held.body.id}`);
    expect(row).toContain('succeeded');
    await page.context().close();
  });

  it('lets a member answer a free-text question, and shows a sentence when someone answers it again', async () => {
    const asker = await makeToken(server.app, team.teamId, { name: 'Docs bot', permissions: ['decisions:request', 'decisions:read'] });
    const asked = await send(server.baseUrl, 'POST', '/api/decisions', asker.value, { question: 'What should the release notes lead with?' });
    const decisionId = asked.body.id as string;

    const member = await signIn('member@example.com');
    const owner = await signIn('owner@example.com');
    for (const page of [member, owner]) await page.goto(`${server.baseUrl}/panel/decisions`);

    await card(member, decisionId).locator('textarea[name=answer]').fill('The faster restores.\nThen the new panel page.');
    await clickAndLoad(member, card(member, decisionId).locator('button:has-text("Send answer")'));
    expect(await member.locator('.notice[role=status]').textContent()).toContain('The faster restores.');
    const answered = await send(server.baseUrl, 'GET', `/api/decisions/${decisionId}`, asker.value);
    expect(answered.body).toMatchObject({ state: 'answered', answer: 'The faster restores.\nThen the new panel page.', answered_by: { type: 'member', channel: 'panel' } });

    // The owner's page was loaded before the answer: the second answer is refused with a sentence, not an error page.
    await card(owner, decisionId).locator('textarea[name=answer]').fill('Something else');
    await clickAndLoad(owner, card(owner, decisionId).locator('button:has-text("Send answer")'));
    expect(await owner.locator('p.error[role=alert]').textContent())
      .toMatch(/^This decision was already answered \("The faster restores\.\nThen the new panel page\."\) at .+; it cannot be answered again\.$/);
    expect((await send(server.baseUrl, 'GET', `/api/decisions/${decisionId}`, asker.value)).body.answer).toBe('The faster restores.\nThen the new panel page.');
    await member.context().close();
    await owner.context().close();
  });

  it('holds a stop by a token created with "Needs approval for" on the API Tokens page, and fails it when denied in the panel', async () => {
    const page = await signIn('owner@example.com');
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens/new`);
    await page.fill('input[name=name]', 'Careful agent');
    await page.check('input[name=access][value=full]');
    await page.check('input[name=needs_approval][value=stop_erp_service]');
    await clickAndLoad(page, 'button:has-text("Create token")');
    const value = await page.inputValue('#token-value');
    await page.goto(`${server.baseUrl}/panel/developer/api-tokens`);
    expect(await page.locator('tr', { hasText: 'Careful agent' }).locator('.needs-approval').textContent()).toBe('Needs approval for: Stop an ERP service');

    const held = await send(server.baseUrl, 'POST', `/api/service-erp/${team.serviceIds[1]}/stop`, value);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ kind: 'stop', state: 'awaiting_approval' });
    // Only what was ticked waits: a start runs at once.
    const started = await send(server.baseUrl, 'POST', `/api/service-erp/${team.serviceIds[1]}/start`, value);
    expect([started.status, started.body.state]).toEqual([202, 'queued']);

    await page.goto(`${server.baseUrl}/panel/decisions`);
    await clickAndLoad(page, card(page, held.body.decision_id).locator('button[value=deny]'));
    expect(await waitForOperation(server.baseUrl, value, held.body.id)).toMatchObject({
      state: 'failed', reason: `Not approved: denied in decision ${held.body.decision_id}.`,
    });
    await page.context().close();
  });
});
