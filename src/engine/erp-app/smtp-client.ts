// A minimal SMTP client (RFC 5321) on node:net: enough for the ERP application to hand one
// plain-text message to a relay on loopback (a copy's mail catcher, or a local relay). No TLS;
// AUTH PLAIN when credentials are given (the mail catcher knows each copy by its own).
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
}

export interface SmtpTarget {
  host: string;
  port: number;
  auth?: { username: string; password: string } | null;
  timeoutMs?: number;
}

export class SmtpError extends Error {}

/** Parses "host:port"; null when the setting is empty or "none". */
export function parseSmtpTarget(setting: string | null | undefined): SmtpTarget | null {
  if (!setting || setting.trim().toLowerCase() === 'none') return null;
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(setting.trim());
  const port = Number(match?.[2]);
  if (!match || !match[1] || port < 1 || port > 65535) throw new SmtpError(`outgoing mail setting "${setting}" is not host:port`);
  return { host: match[1], port };
}

export async function sendMail(target: SmtpTarget, message: MailMessage): Promise<void> {
  const socket = connect({ host: target.host, port: target.port });
  socket.setTimeout(target.timeoutMs ?? 5000, () => socket.destroy(new SmtpError('the SMTP server did not answer in time')));
  const replies = replyReader(socket);
  try {
    await expect(replies, 220, 'greeting');
    socket.write('EHLO teaminfra-erp\r\n');
    await expect(replies, 250, 'EHLO');
    if (target.auth) {
      socket.write(`AUTH PLAIN ${Buffer.from(`\0${target.auth.username}\0${target.auth.password}`).toString('base64')}\r\n`);
      await expect(replies, 235, 'AUTH');
    }
    socket.write(`MAIL FROM:<${message.from}>\r\n`);
    await expect(replies, 250, 'MAIL FROM');
    socket.write(`RCPT TO:<${message.to}>\r\n`);
    await expect(replies, [250, 251], 'RCPT TO');
    socket.write('DATA\r\n');
    await expect(replies, 354, 'DATA');
    socket.write(dotStuffed(format(message)) + '\r\n.\r\n');
    await expect(replies, 250, 'message');
    socket.write('QUIT\r\n');
    await expect(replies, 221, 'QUIT').catch(() => undefined);
  } finally {
    socket.destroy();
  }
}

function format(message: MailMessage): string {
  const headers = [
    `From: ${message.from}`, `To: ${message.to}`, `Subject: ${encodeHeader(message.subject)}`,
    `Date: ${new Date().toUTCString()}`, `Message-ID: <${randomUUID()}@teaminfra-erp>`, 'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${message.text.replace(/\r?\n/g, '\r\n')}`;
}

function encodeHeader(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value).toString('base64')}?=`;
}

// A line starting with "." would otherwise end the message early (RFC 5321 section 4.5.2).
function dotStuffed(text: string): string {
  return text.replace(/(^|\r\n)\./g, '$1..');
}

async function expect(replies: () => Promise<{ code: number; text: string }>, wanted: number | number[], step: string) {
  const reply = await replies();
  const accepted = Array.isArray(wanted) ? wanted : [wanted];
  if (!accepted.includes(reply.code)) throw new SmtpError(`the SMTP server refused ${step}: ${reply.code} ${reply.text}`);
}

/** Returns a function that resolves with the next complete (possibly multi-line) reply. */
function replyReader(socket: Socket): () => Promise<{ code: number; text: string }> {
  let buffered = '';
  let lines: string[] = [];
  const complete: { code: number; text: string }[] = [];
  let waiting: { resolve: (reply: { code: number; text: string }) => void; reject: (error: Error) => void } | undefined;
  let failure: Error | undefined;

  const fail = (error: Error) => {
    failure ??= error instanceof SmtpError ? error : new SmtpError(`cannot reach the SMTP server: ${error.message}`);
    waiting?.reject(failure);
    waiting = undefined;
  };
  socket.on('error', fail);
  socket.on('close', () => fail(new SmtpError('the SMTP server closed the connection')));
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).replace(/\r$/, '');
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      // "250-..." continues a reply; "250 ..." (or a bare code) ends it.
      if (line.length <= 3 || line[3] !== '-') {
        complete.push({ code: Number(line.slice(0, 3)), text: lines.map((entry) => entry.slice(4)).join(' ') });
        lines = [];
      }
    }
    if (waiting && complete.length > 0) {
      waiting.resolve(complete.shift() as { code: number; text: string });
      waiting = undefined;
    }
  });

  return () => {
    const next = complete.shift();
    if (next) return Promise.resolve(next);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => {
      waiting = { resolve, reject };
    });
  };
}
