// Creating a webhook, for the panel and the operator command line alike: the URL is checked as
// written and as resolved now (it is checked again at every delivery), event types must exist.
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { plainTextProblem } from '../core/plain-text.js';
import type { Database } from '../db/tables.js';
import { insertWebhook } from '../db/repositories/webhooks.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { WebhookConfig } from './config.js';
import { isEventType } from './event-catalog.js';
import { isPrivateAddress } from './private-address.js';
import { checkWebhookUrl, WebhookRefusal } from './url-safety.js';

export interface NewWebhook {
  teamId: string;
  url: string;
  description?: string;
  /** Event types, or '*' for all. */
  eventTypes: readonly string[] | '*';
  /** Operator-only: allow a private or loopback destination for this webhook. */
  allowPrivate?: boolean;
}

export async function createWebhook(db: Kysely<Database>, config: WebhookConfig, secrets: SecretBox, webhook: NewWebhook) {
  const allowPrivate = config.allowPrivate || Boolean(webhook.allowPrivate);
  const url = checkWebhookUrl(webhook.url, { allowHttp: config.allowHttp || allowPrivate, allowPrivate });
  if (webhook.eventTypes !== '*') {
    const unknown = webhook.eventTypes.filter((type) => !isEventType(type));
    if (unknown.length > 0) throw new WebhookRefusal(`Unknown event type ${unknown.join(', ')}.`);
    if (webhook.eventTypes.length === 0) throw new WebhookRefusal('Choose at least one event type.');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) === 0) {
    const addresses = await dns.lookup(host, { all: true }).catch(() => []);
    if (addresses.some((entry) => isPrivateAddress(entry.address))) {
      throw new WebhookRefusal(`${host} resolves to a private, loopback or link-local address, which is not allowed.`);
    }
  }
  if ((webhook.description ?? '').length > 200) throw new WebhookRefusal('Keep the description under 200 characters.');
  const descriptionProblem = plainTextProblem(webhook.description ?? '');
  if (descriptionProblem) throw new WebhookRefusal(`The description ${descriptionProblem}`);
  return insertWebhook(db, secrets, {
    teamId: webhook.teamId, url: url.toString(), description: webhook.description ?? '', eventTypes: webhook.eventTypes, allowPrivate,
  });
}
