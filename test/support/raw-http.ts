// Bytes written straight to the server's socket, for requests no HTTP client will send (no Host,
// an empty Host, malformed request lines). Returns the status, the headers (lower-case names)
// and the body of the answer; the request should say "Connection: close".
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function sendRawHttp(baseUrl: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => { received += chunk; });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = received.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = received.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: received.slice(split + 4) });
    });
  });
}
