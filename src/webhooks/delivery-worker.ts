// The delivery worker: fans new events out into deliveries, then posts due deliveries with
// undici, signed, with a timeout, through a DNS lookup that refuses private addresses. Every
// attempt is logged on the delivery; failures are retried on the schedule; 410 disables.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { Agent, request } from 'undici';
import type { Database } from '../db/tables.js';
import {
  claimDueDeliveries, dispatchEvents, markWebhookHealth, recordAttempt, setWebhookEnabled, webhookSecretContext, type ClaimedDelivery,
} from '../db/repositories/webhooks.js';
import { UnsealError, type SecretBox } from '../secrets/secret-box.js';
import type { WebhookConfig } from './config.js';
import { nextDelayMs, parseRetryAfter } from './retry-schedule.js';
import { signedHeaders } from './signing.js';
import { isPrivateAddress } from './private-address.js';
import { guardedLookup, type Lookup } from './url-safety.js';

export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly owner = `webhooks-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly agents: Record<'guarded' | 'open', Agent>;

  constructor(
    private readonly db: Kysely<Database>, private readonly config: WebhookConfig, private readonly secrets: SecretBox, lookup?: Lookup,
  ) {
    this.agents = {
      guarded: new Agent({ connect: { lookup: guardedLookup(false, lookup) as never } }),
      open: new Agent({ connect: { lookup: guardedLookup(true, lookup) as never } }),
    };
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick().catch((error: unknown) => console.error('webhook worker:', (error as Error).message))
        .finally(() => { if (!this.stopped) this.timer = setTimeout(loop, this.config.pollMs); });
    };
    loop();
  }

  private closing: Promise<void> | undefined;

  /** Stops polling, lets the round in progress finish, closes connections. Safe to call twice. */
  stop(): Promise<void> {
    this.closing ??= (async () => {
      this.stopped = true;
      clearTimeout(this.timer);
      await this.running;
      await Promise.all([this.agents.guarded.close(), this.agents.open.close()]);
    })();
    return this.closing;
  }

  /** One round: dispatch new events, send what is due. Exposed for tests. */
  async tick(): Promise<void> {
    await dispatchEvents(this.db);
    const due = await claimDueDeliveries(this.db, this.owner, this.config.timeoutMs * 3, 20);
    await Promise.all(due.map((delivery) => this.deliver(delivery)));
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const attempts = delivery.attempts + 1;
    const started = Date.now();
    if (delivery.enabled !== 1) {
      await recordAttempt(this.db, delivery.id, {
        state: 'failed', attempts: delivery.attempts, nextAttemptAt: new Date().toISOString(), status: null, durationMs: 0,
        excerpt: null, error: 'The webhook is disabled.',
      });
      return;
    }
    const allowPrivate = this.config.allowPrivate || delivery.allow_private === 1;
    let status: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    let retryAfter: number | undefined;
    try {
      const secrets = signingSecretsOfDelivery(this.secrets, delivery);
      const url = new URL(delivery.url);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // An address written in the URL is connected to without a lookup, so it is checked here.
      if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) throw new Error(`${host} is a private address; delivery refused.`);
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await request(url, {
        method: 'POST', body: delivery.payload, dispatcher: allowPrivate ? this.agents.open : this.agents.guarded,
        headers: { 'content-type': 'application/json', 'user-agent': 'teaminfra-webhooks/1', ...signedHeaders(secrets, delivery.event_id, timestamp, delivery.payload) },
        headersTimeout: this.config.timeoutMs, bodyTimeout: this.config.timeoutMs, signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      status = response.statusCode;
      retryAfter = parseRetryAfter(headerText(response.headers['retry-after']));
      excerpt = await readCapped(response.body, this.config.excerptBytes);
    } catch (thrown) {
      if (thrown instanceof UnsealError) {
        // The operator's problem (a node without the right secrets key), told in the log; the team sees a sentence.
        console.error(`webhook worker: cannot sign for webhook ${delivery.webhook_id}: ${thrown.message}`);
        error = 'The delivery could not be signed on this server; the operator has been told why.';
      } else {
        error = describe(thrown);
      }
    }
    const durationMs = Date.now() - started;
    const now = new Date();
    if (status !== null && status >= 200 && status < 300) {
      await recordAttempt(this.db, delivery.id, { state: 'delivered', attempts, nextAttemptAt: now.toISOString(), status, durationMs, excerpt, error: null });
      await markWebhookHealth(this.db, delivery.webhook_id, true);
      return;
    }
    if (status === 410) {
      await recordAttempt(this.db, delivery.id, { state: 'failed', attempts, nextAttemptAt: now.toISOString(), status, durationMs, excerpt, error: 'The endpoint answered 410 Gone.' });
      await setWebhookEnabled(this.db, delivery.webhook_id, false, 'The endpoint answered 410 Gone, so delivery was stopped. Enable the webhook again once the endpoint is back.');
      return;
    }
    const delay = nextDelayMs(attempts, this.config.retryDelaysMs, retryAfter);
    await recordAttempt(this.db, delivery.id, {
      state: delay === null ? 'failed' : 'pending', attempts, nextAttemptAt: new Date(now.getTime() + (delay ?? 0)).toISOString(),
      status, durationMs, excerpt, error: error ?? `The endpoint answered ${status}.`,
    });
    await markWebhookHealth(this.db, delivery.webhook_id, false);
    const failingSince = delivery.failing_since ? Date.parse(delivery.failing_since) : now.getTime();
    if (now.getTime() - failingSince > this.config.disableAfterMs) {
      await setWebhookEnabled(this.db, delivery.webhook_id, false,
        `Deliveries have failed since ${new Date(failingSince).toISOString().slice(0, 16).replace('T', ' ')} UTC, so the webhook was disabled. Fix the endpoint, then enable it again.`);
    }
  }
}

/** The secrets that sign a delivery: the webhook's, and during a rotation its previous one too. */
function signingSecretsOfDelivery(box: SecretBox, delivery: ClaimedDelivery): string[] {
  const context = webhookSecretContext(delivery.webhook_id);
  const secrets = [box.reveal(delivery.secret, context)];
  if (delivery.previous_secret && delivery.previous_secret_expires_at && delivery.previous_secret_expires_at > new Date().toISOString()) {
    secrets.push(box.reveal(delivery.previous_secret, context));
  }
  return secrets;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads at most `limit` bytes of a response body, then stops reading. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describe(thrown: unknown): string {
  const error = thrown as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const cause = error.cause ?? error;
  if (cause.code === 'EPRIVATE') return cause.message ?? 'Private address refused.';
  if (error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT' || (error as Error).name === 'TimeoutError') return 'The endpoint did not answer in time.';
  if (cause.code === 'ECONNREFUSED') return 'The connection was refused.';
  if (cause.code === 'ENOTFOUND') return 'The host name does not resolve.';
  return (cause.message ?? String(thrown)).slice(0, 200);
}
