// A tiny SMTP receiver for tests of the ERP application's outgoing mail: it accepts every
// message and keeps it. (The product's mail catcher is its own component and issue.)
import { createServer, type Server } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

export interface SmtpSink {
  port: number;
  messages: ReceivedMail[];
  close(): Promise<void>;
}

/** Listens on `host` (127.0.0.1; any other loopback address too) and `port` (0: a free one). */
export async function startSmtpSink(listen: { host?: string; port?: number } = {}): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const server: Server = createServer((socket) => {
    let buffered = '';
    let inData = false;
    let current: ReceivedMail = { from: '', to: [], data: '' };
    socket.write('220 sink ready\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffered.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffered.slice(0, end).replace(/\r\n\.\./g, '\r\n.');
          buffered = buffered.slice(end + 5);
          messages.push(current);
          current = { from: '', to: [], data: '' };
          inData = false;
          socket.write('250 queued\r\n');
          continue;
        }
        const newline = buffered.indexOf('\r\n');
        if (newline < 0) return;
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-sink\r\n250 8BITMIME\r\n');
        else if (verb === 'MAIL') { current.from = /<(.*)>/.exec(line)?.[1] ?? ''; socket.write('250 ok\r\n'); }
        else if (verb === 'RCPT') { current.to.push(/<(.*)>/.exec(line)?.[1] ?? ''); socket.write('250 ok\r\n'); }
        else if (verb === 'DATA') { inData = true; socket.write('354 go ahead\r\n'); }
        else if (verb === 'QUIT') { socket.end('221 bye\r\n'); return; }
        else socket.write('502 not implemented\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
