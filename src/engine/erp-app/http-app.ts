// The ERP application's HTTP surface: home page, /health (which the driver uses to recognise
// its own process), and the password-reset pages.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type SQLite from 'better-sqlite3';
import type { ErpAppConfig } from './config.js';
import { homePage, messagePage, newPasswordPage, resetRequestPage } from './pages.js';
import { completePasswordReset, isResetTokenValid, requestPasswordReset } from './reset-password.js';

const FORM_LIMIT_BYTES = 16 * 1024;

/** `publicUrl`: where people reach it, for links in its emails (in a container, not the address it listens on). */
export function createErpServer(config: ErpAppConfig, db: SQLite.Database, publicUrl?: string): Server {
  const baseUrl = publicUrl ?? `http://${config.host}:${config.port}`;
  const count = (table: string) => (db.prepare(`SELECT count(*) AS count FROM ${table}`).get() as { count: number }).count;

  const routes: Record<string, (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void> | void> = {
    'GET /': (_request, response) => html(response, 200, homePage(config.name, config.revision, {
      customers: count('customers'), products: count('products'), salesOrders: count('sales_orders'),
    })),
    'GET /health': (_request, response) => json(response, 200, {
      status: 'ok', service_id: config.serviceId, revision: config.revision, pid: process.pid,
    }),
    'GET /web/reset_password': (_request, response, url) => {
      const token = url.searchParams.get('token');
      if (token === null) return html(response, 200, resetRequestPage(config.name));
      if (!isResetTokenValid(db, token)) return html(response, 400, messagePage(config.name, 'Link expired', 'This reset link is unknown, used or expired. Ask for a new one.'));
      return html(response, 200, newPasswordPage(config.name, token));
    },
    'POST /web/reset_password': async (request, response) => {
      const login = (await readForm(request)).get('login')?.trim() ?? '';
      if (login === '') return html(response, 400, resetRequestPage(config.name, 'Enter your login.'));
      const outcome = await requestPasswordReset(db, config, baseUrl, login);
      if (outcome.kind === 'mail_disabled') {
        return html(response, 503, messagePage(config.name, 'Email is not available',
          'This service has no outgoing mail server (outgoing mail: none), so no reset email was sent. Ask your administrator.'));
      }
      if (outcome.kind === 'mail_failed') {
        return html(response, 502, messagePage(config.name, 'Email not sent', 'The reset email could not be sent. Try again later.'));
      }
      return html(response, 200, messagePage(config.name, 'Check your email', 'If that login exists, a reset link has been sent to its email address.'));
    },
    'POST /web/set_password': async (request, response) => {
      const form = await readForm(request);
      const password = form.get('password') ?? '';
      if (password.length < 8) return html(response, 400, messagePage(config.name, 'Password too short', 'Use at least 8 characters.'));
      const done = completePasswordReset(db, form.get('token') ?? '', password);
      return done
        ? html(response, 200, messagePage(config.name, 'Password changed', 'You can now sign in with your new password.'))
        : html(response, 400, messagePage(config.name, 'Link expired', 'This reset link is unknown, used or expired. Ask for a new one.'));
    },
  };

  return createServer((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const route = routes[`${request.method} ${url.pathname}`];
    if (!route) return html(response, 404, messagePage(config.name, 'Not found', 'There is no such page.'));
    Promise.resolve(route(request, response, url)).catch((error: unknown) => {
      console.error('request failed', error);
      if (!response.headersSent) html(response, 500, messagePage(config.name, 'Error', 'Something went wrong.'));
      else response.destroy();
    });
  });
}

function html(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(body);
}

function json(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(body));
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of request) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > FORM_LIMIT_BYTES) throw new Error('form too large');
  }
  return new URLSearchParams(text);
}
