// The demo's staging copy, made the way a user makes one: through the REST API with the demo
// token, so the engine gives it its own mail-catcher login. It is then started and asked once
// for a password reset, so that on fresh demo data the mail catcher already holds an email and
// the mail-catcher curls of docs/rest-api.md have something to read. Requests are injected into
// the HTTP server in process (no listening address needed); the reset is a real request to the
// copy.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';

export const DEMO_COPY_NAME = 'Production ERP (staging copy)';
const OPERATION_TIMEOUT_MS = 60_000;

export interface DemoCopy {
  copyId: string;
}

export async function makeDemoCopy(server: FastifyInstance, token: string, serviceId: string): Promise<DemoCopy> {
  const call = async (method: 'GET' | 'POST', url: string, body?: object) => {
    const response = await server.inject({
      method, url, payload: body, headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
    if (response.statusCode >= 300) throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
    return response.json() as Record<string, unknown>;
  };
  const completed = async (operation: Record<string, unknown>) => {
    const deadline = Date.now() + OPERATION_TIMEOUT_MS;
    for (;;) {
      const current = await call('GET', `/api/operations/${String(operation.id)}`);
      if (current.state === 'succeeded') return current;
      if (current.state === 'failed') throw new Error(`the ${String(current.kind)} operation failed: ${String(current.reason)}`);
      if (Date.now() > deadline) throw new Error(`the ${String(current.kind)} operation is still ${String(current.state)}`);
      await sleep(50);
    }
  };

  const copied = await completed(await call('POST', `/api/service-erp/${serviceId}/copies`, { name: DEMO_COPY_NAME }));
  const copyId = String(copied.service_id);
  await completed(await call('POST', `/api/service-erp/${copyId}/start`));
  const url = String((await call('GET', `/api/service-erp/${copyId}`)).url);
  const reset = await fetch(`${url}web/reset_password`, { method: 'POST', body: new URLSearchParams({ login: 'admin' }) });
  if (reset.status !== 200) throw new Error(`the copy's password reset answered ${reset.status}`);
  // The copy's SMTP session has ended; the catcher stores the email as it accepts it, so it is listed now.
  const emails = await call('GET', `/api/service-erp/${copyId}/emails`);
  if (!Array.isArray(emails.data) || emails.data.length === 0) throw new Error('the password-reset email was not caught');
  return { copyId };
}
