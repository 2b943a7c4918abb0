// Mounts the panel under /panel in its own Fastify scope, so that form bodies and cookies are
// understood there and nowhere in the API.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import type { OAuthServer } from '../oauth/oauth-server.js';
import { packageRoot } from '../package-root.js';
import { registerActivityPage } from './activity-page.js';
import { registerApiTokensPage } from './api-tokens-page.js';
import { registerBackupSchedulePage } from './backup-schedule-page.js';
import { registerConsentPage } from './consent-page.js';
import { registerDecisionsPage } from './decisions-page.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { registerInvitationPage } from './invitation-page.js';
import { registerMembersPage } from './members-page.js';
import { registerNotificationsPage } from './notifications-page.js';
import { registerOverview } from './overview.js';
import { registerServicePage } from './service-page.js';
import { registerServiceActions } from './service-actions.js';
import { registerOperationPage } from './operation-page.js';
import { registerBackupsPage } from './backups-page.js';
import { registerBackupDestinationPage } from './backup-destination-page.js';
import { registerCaughtEmailsPage } from './caught-emails-page.js';
import { registerCaughtEmailHtml } from './caught-email-html.js';
import { registerNewServicePage } from './new-service-page.js';
import { registerNewServerPage } from './new-server-page.js';
import { registerTokenChoices } from './token-choices.js';
import { registerWebhooksPage } from './webhooks-page.js';
import { refuseCrossSite } from './same-origin.js';
import { AppError } from '../core/errors.js';
import { PanelRefusal, refusalOfAppError, sendRefusal } from './session-guard.js';
import { registerSignIn } from './sign-in.js';
import { limitEachSession } from './session-rate-limit.js';

const ASSET_TYPES: Record<string, string> = { 'panel.css': 'text/css; charset=utf-8', 'panel.js': 'text/javascript; charset=utf-8' };

export async function registerPanel(server: FastifyInstance, app: App, oauth: OAuthServer): Promise<void> {
  const assets = new Map(Object.keys(ASSET_TYPES).map((name) => [name, readFileSync(join(packageRoot, 'src', 'panel', 'assets', name))]));
  server.get('/', (_request, reply) => reply.redirect('/panel'));

  await server.register(async (panel) => {
    await panel.register(fastifyCookie);
    await panel.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
    // First of all: a session past its budget is answered before anything is read (session-rate-limit.ts).
    limitEachSession(panel, app.config.rateLimit);
    // Before the body is read: a form posted from another site changes nothing (same-origin.ts).
    panel.addHook('onRequest', async (request) => refuseCrossSite(request, app.publicUrl));
    panel.setErrorHandler((error, request, reply) => {
      if (error instanceof PanelRefusal) return sendRefusal(reply, error);
      // A member's call that invoke() refused (or that failed on our side: its public sentence only).
      if (error instanceof AppError) return sendRefusal(reply, refusalOfAppError(error));
      request.log.error({ err: error }, 'panel error');
      return sendPage(reply, page('Something went wrong', html`<p class="error">Something went wrong on our side. The error has been logged; please try again.</p>`), 500);
    });
    panel.get<{ Params: { name: string } }>('/panel/assets/:name', (request, reply) => {
      const body = assets.get(request.params.name);
      if (!body) return reply.callNotFound();
      return reply.type(ASSET_TYPES[request.params.name] as string).header('Cache-Control', 'public, max-age=3600').send(body);
    });
    registerSignIn(panel, app);
    registerOverview(panel, app);
    registerNewServicePage(panel, app);
    registerNewServerPage(panel, app);
    registerServicePage(panel, app);
    registerServiceActions(panel, app);
    registerOperationPage(panel, app);
    registerBackupsPage(panel, app);
    registerCaughtEmailsPage(panel, app);
    registerCaughtEmailHtml(panel, app);
    registerDecisionsPage(panel, app);
    registerApiTokensPage(panel, app);
    registerTokenChoices(panel, app);
    registerMembersPage(panel, app);
    registerNotificationsPage(panel, app);
    registerWebhooksPage(panel, app);
    registerBackupDestinationPage(panel, app);
    registerActivityPage(panel, app);
    registerBackupSchedulePage(panel, app);
    registerInvitationPage(panel, app);
    registerConsentPage(panel, app, oauth);
  });
}
