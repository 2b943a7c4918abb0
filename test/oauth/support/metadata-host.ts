// Where a test's assistants publish their Client ID Metadata Documents: a real https server on
// 127.0.0.1 with a certificate from the test's own CA. Each path answers what the test put
// there: a document (JSON), a redirect, or raw bytes; every request is counted.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestCertificates } from '../../support/test-ca.js';

type Answer =
  | { document: unknown; cacheControl?: string }
  | { redirectTo: string }
  | { raw: string };

export interface MetadataHost {
  origin: string;
  /** The URL of `path` on this host (`/clients/x.json`), which a document there names as its client_id. */
  urlOf(path: string): string;
  publish(path: string, answer: Answer): string;
  requestsFor(path: string): number;
  close(): Promise<void>;
}

export async function startMetadataHost(certificates: TestCertificates): Promise<MetadataHost> {
  const answers = new Map<string, Answer>();
  const requests = new Map<string, number>();
  const server: Server = createServer({ key: certificates.serverKeyPem, cert: certificates.serverCertPem }, (request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const answer = answers.get(path);
    if (!answer) return void response.writeHead(404).end();
    if ('redirectTo' in answer) return void response.writeHead(302, { Location: answer.redirectTo }).end();
    if ('raw' in answer) return void response.writeHead(200, { 'Content-Type': 'application/json' }).end(answer.raw);
    response.writeHead(200, { 'Content-Type': 'application/json', ...(answer.cacheControl ? { 'Cache-Control': answer.cacheControl } : {}) })
      .end(JSON.stringify(answer.document));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    urlOf: (path) => origin + path,
    publish(path, answer) {
      answers.set(path, answer);
      return origin + path;
    },
    requestsFor: (path) => requests.get(path) ?? 0,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
