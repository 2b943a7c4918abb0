// The mail catcher: a real SMTP listener on loopback that accepts mail only from copies (each
// authenticates with its own credentials) and keeps every message for `mailcatcher:read`.
// Nothing it receives is ever relayed anywhere.
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Database } from '../db/tables.js';
import type { MailConfig } from './mail-config.js';
import { copyForCredentials } from './mail-credentials.js';
import { storeEmail } from './store-email.js';

type SmtpError = Error & { responseCode?: number };

function smtpError(code: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode: code });
}

export class MailCatcher {
  private readonly server: SMTPServer;
  port = 0;

  constructor(private readonly db: Kysely<Database>, private readonly config: MailConfig) {
    this.server = new SMTPServer({
      banner: 'teaminfra mail catcher: mail is kept, never delivered',
      authMethods: ['PLAIN', 'LOGIN'],
      // Loopback only; copies authenticate without TLS.
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
      size: config.maxMessageBytes,
      maxClients: 100,
      socketTimeout: 30_000,
      logger: false,
      onAuth: (auth, _session, callback) => {
        copyForCredentials(this.db, auth.username ?? '', auth.password ?? '')
          .then((copy) => (copy ? callback(null, { user: copy }) : callback(smtpError(535, 'Authentication failed: unknown copy or wrong password.'))))
          .catch(() => callback(smtpError(454, 'Temporary authentication failure; try again.')));
      },
      onData: (stream, session, callback) => this.receive(stream, session, callback),
    });
    // A misbehaving client must never take the listener down.
    this.server.on('error', () => undefined);
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.server.once('error', reject);
      this.server.listen(this.config.port, this.config.host, () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this.port;
  }

  stop(): Promise<void> {
    if (!this.server.server.listening) return Promise.resolve();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private receive(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (error?: Error | null) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit, keep draining the stream but stop holding it in memory.
      if (size <= this.config.maxMessageBytes) chunks.push(chunk);
    });
    stream.on('end', () => {
      if (stream.sizeExceeded || size > this.config.maxMessageBytes) {
        return callback(smtpError(552, `Message too large: the limit is ${this.config.maxMessageBytes} bytes. Nothing was kept.`));
      }
      const copy = session.user as unknown as { id: string; teamId: string };
      const envelope = {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        to: session.envelope.rcptTo.map((recipient) => recipient.address),
      };
      storeEmail({ db: this.db, maxEmailsPerCopy: this.config.maxEmailsPerCopy }, copy, Buffer.concat(chunks), envelope)
        .then(() => callback())
        .catch(() => callback(smtpError(451, 'The message could not be kept; try again later.')));
    });
  }
}
