// Developer > Backups (owners and admins): the team's off-site backup destination. Like tokens,
// it exists only here and for the operator (no token can read or set it): it decides where the
// team's whole database goes. Saving checks the store first (a test object written, read back
// and deleted) and says in a sentence what failed; the secret is never shown again. The team's
// backup key is made with the first destination and shown once, with the command that opens a
// downloaded object. A loopback or private endpoint is refused unless the operator set
// TEAMINFRA_BACKUP_DESTINATION_ALLOW_PRIVATE=1.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { DECRYPT_COMMAND } from '../offsite/backup-key.js';
import { destinationPrivateAllowedFromEnv, destinationSummary, DestinationRefusal, setBackupDestination } from '../offsite/destinations.js';
import { html } from './html.js';
import { csrfField, page, sendPage } from './layout.js';
import { panelAudit } from './panel-audit.js';
import { requireCsrf, requireRole, requireTeamSession, type TeamSession } from './session-guard.js';

const BASE = '/panel/developer/backups';
type Body = Record<string, string | undefined>;

export function registerBackupDestinationPage(server: FastifyInstance, app: App): void {
  const db = app.db.kysely;

  async function manager(request: FastifyRequest, reply: FastifyReply) {
    const session = await requireTeamSession(db, request, reply);
    if (session) requireRole(session, ['owner', 'admin'], 'the Backups page');
    return session;
  }

  const form = async (session: TeamSession, values: Body, error?: string) => {
    const current = await destinationSummary(db, session.team.id);
    return page('Backups', html`
<p>Every backup of your services is also encrypted with your team's backup key and stored in your own
S3-compatible object storage, so that losing a server loses no data.</p>
${current ? html`<h2>Current destination</h2>
<dl class="destination"><dt>Endpoint</dt><dd>${current.endpoint}</dd><dt>Region</dt><dd>${current.region}</dd>
<dt>Bucket</dt><dd>${current.bucket}</dd><dt>Prefix</dt><dd>${current.prefix || '(none)'}</dd>
<dt>Access key id</dt><dd>${current.access_key_id}</dd><dt>Saved</dt><dd>${current.created_at.slice(0, 16).replace('T', ' ')} UTC</dd></dl>
<p class="muted">The secret access key is kept sealed and never shown. Saving a new destination replaces this one; backups already stored here stay readable.</p>`
    : html`<p class="notice">No off-site destination yet: your backups are kept only on their servers.</p>`}
<h2>${current ? 'Replace the destination' : 'Set a destination'}</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${BASE}">${csrfField(session)}
  <label>Endpoint URL <input type="url" name="endpoint" required placeholder="https://s3.example.com" value="${values.endpoint ?? ''}"></label>
  <label>Region <input name="region" required value="${values.region ?? 'us-east-1'}"></label>
  <label>Bucket <input name="bucket" required value="${values.bucket ?? ''}"></label>
  <label>Prefix (optional) <input name="prefix" placeholder="teaminfra/" value="${values.prefix ?? ''}"></label>
  <label>Access key id <input name="access_key_id" required autocomplete="off" value="${values.access_key_id ?? ''}"></label>
  <label>Secret access key <input type="password" name="secret_access_key" required autocomplete="off"></label>
  <button type="submit">Check and save</button>
</form>`, session);
  };

  const keyShownOnce = (session: TeamSession, identity: string) => page('Your team\'s backup key', html`
<p class="notice"><strong>Copy this backup key now and keep it apart from your backups.</strong> It is shown only once.
Every off-site copy is encrypted with it; with it, your team can open a copy without us.</p>
<input id="backup-key" class="secret" readonly value="${identity}">
<button type="button" data-copy-target="backup-key" hidden>Copy</button>
<p>Save it as <code>key.txt</code>, then open an object downloaded from your bucket with the <code>age</code> tool:</p>
<pre><code>${DECRYPT_COMMAND}</code></pre>
<p><a href="${BASE}">Back to Backups</a></p>`, session);

  server.get(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    return session ? sendPage(reply, await form(session, {})) : reply;
  });

  server.post<{ Body: Body }>(BASE, async (request, reply) => {
    const session = await manager(request, reply);
    if (!session) return reply;
    requireCsrf(session, request);
    const body = request.body ?? {};
    const text = (name: string) => String(body[name] ?? '').trim();
    try {
      const saved = await setBackupDestination(db, app.secrets, session.team.id, {
        endpoint: text('endpoint'), region: text('region'), bucket: text('bucket'), prefix: text('prefix'),
        accessKeyId: text('access_key_id'), secretAccessKey: String(body.secret_access_key ?? ''), allowPrivate: destinationPrivateAllowedFromEnv(),
      });
      panelAudit(app, { teamId: session.team.id, userId: session.userId, action: 'set_backup_destination', outcome: 'allowed', detail: saved.destinationId });
      if (saved.backupKey) return sendPage(reply, keyShownOnce(session, saved.backupKey.identity), 201);
      return reply.redirect(BASE, 303);
    } catch (error) {
      if (error instanceof DestinationRefusal) return sendPage(reply, await form(session, body, error.message), 422);
      throw error;
    }
  });
}
