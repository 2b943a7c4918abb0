// Keeps one caught email: the raw message and its parsed parts as one row, and an
// `email.caught` event, in one transaction, then trims the copy to its limit. The raw message
// is in the database, not in a file of the node whose catcher received it, so that every node
// sharing the database (PostgreSQL) serves it; nothing is ever half-stored.
import { rm } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import { simpleParser, type AddressObject } from 'mailparser';
import type { Database } from '../db/tables.js';
import { newId, nowIso } from '../db/ids.js';
import { insertEvent } from '../db/repositories/events.js';
import { trimEmailsOfCopy } from '../db/repositories/caught-emails.js';

export interface StoreContext {
  db: Kysely<Database>;
  maxEmailsPerCopy: number;
}

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((entry) => entry.value.map((address) => address.address ?? '').filter(Boolean));
}

export async function storeEmail(
  context: StoreContext, copy: { id: string; teamId: string }, raw: Buffer, envelope: { from: string | null; to: string[] },
): Promise<string> {
  const parsed = await simpleParser(raw, { skipImageLinks: true });
  const id = newId('eml');
  const recipients = envelope.to.length > 0 ? envelope.to : [...addresses(parsed.to), ...addresses(parsed.cc)];
  const sender = envelope.from ?? addresses(parsed.from)[0] ?? null;
  const attachments = parsed.attachments.map((attachment) => ({
    filename: attachment.filename ?? null, content_type: attachment.contentType, size_bytes: attachment.size,
  }));
  const removed = await context.db.transaction().execute(async (trx) => {
    await trx.insertInto('caught_emails').values({
      id, team_id: copy.teamId, copy_id: copy.id, message_id: parsed.messageId ?? null, sender, recipients: JSON.stringify(recipients),
      subject: parsed.subject ?? null, text_body: parsed.text ?? null, html_body: typeof parsed.html === 'string' ? parsed.html : null,
      attachments: JSON.stringify(attachments), raw_path: '', raw_message: raw, size_bytes: raw.length, received_at: nowIso(),
    }).execute();
    await insertEvent(trx, {
      teamId: copy.teamId, type: 'email.caught',
      data: { copy_id: copy.id, email: { id, subject: parsed.subject ?? null, sender, recipients } },
    });
    return trimEmailsOfCopy(trx, copy.id, context.maxEmailsPerCopy);
  });
  // Emails an earlier version kept as files: trimmed, their files go too.
  await Promise.all(removed.map((path) => rm(path, { force: true })));
  return id;
}
