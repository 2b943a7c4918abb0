// The mail catcher: a real SMTP listener on loopback that accepts mail only from copies (each
// authenticates with its own credentials) and keeps every message for `mailcatcher:read`.
// Nothing it receives is ever relayed anywhere. It also listens, at the same port, on the
// addresses where containers of this machine's Docker engines reach it (their bridge's gateway,
// container-mail-address.ts), each added when a copy first needs it, and there only.
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
  /** The other addresses it listens on, by address: each listening, or failed and forgotten. */
  private readonly others = new Map<string, { server: SMTPServer; listening: Promise<void> }>();
  port = 0;

  constructor(private readonly db: Kysely<Database>, private readonly config: MailConfig) {
    this.server = this.newServer();
  }

  async start(): Promise<number> {
    await listen(this.server, this.config.port, this.config.host);
    this.port = (this.server.server.address() as AddressInfo).port;
    return this.port;
  }

  /**
   * Listens on `host` too, at the port start() took; once per address, however often asked.
   * Rejects with the listen error (its code: EADDRNOTAVAIL when the address is not this
   * machine's, EADDRINUSE when another program holds the port there), and is tried anew next time.
   */
  listenAlso(host: string): Promise<void> {
    if (this.port <= 0) return Promise.reject(new Error('the mail catcher is not listening'));
    const known = this.others.get(host);
    if (known) return known.listening;
    const server = this.newServer();
    const listening = listen(server, this.port, host).catch((error: unknown) => {
      this.others.delete(host);
      throw error;
    });
    this.others.set(host, { server, listening });
    return listening;
  }

  /** Every address it listens on, "host:port", its own first. */
  get addresses(): string[] {
    return [this.server, ...[...this.others.values()].map((other) => other.server)]
      .filter((server) => server.server.listening)
      .map((server) => {
        const { address, port } = server.server.address() as AddressInfo;
        return `${address.includes(':') ? `[${address}]` : address}:${port}`;
      });
  }

  async stop(): Promise<void> {
    const servers = [this.server, ...[...this.others.values()].map((other) => other.server)];
    this.others.clear();
    await Promise.all(servers.filter((server) => server.server.listening)
      .map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  private newServer(): SMTPServer {
    const server = new SMTPServer({
      banner: 'teaminfra mail catcher: mail is kept, never delivered',
      authMethods: ['PLAIN', 'LOGIN'],
      // Loopback and the engine's own bridge only; copies authenticate without TLS.
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
      size: this.config.maxMessageBytes,
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
    server.on('error', () => undefined);
    return server;
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

function listen(server: SMTPServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
}
