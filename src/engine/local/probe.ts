// Asks a port who answers there: an ERP service process says its service id, revision and pid
// on /health. That identity, not the port alone, is what makes a process "ours".
import { get } from 'node:http';

export interface HealthReport {
  serviceId: string;
  revision: number;
  pid: number;
}

export function probeHealth(host: string, port: number, timeoutMs = 1000): Promise<HealthReport | null> {
  return new Promise((resolve) => {
    const request = get({ host, port, path: '/health', agent: false, timeout: timeoutMs }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (text.length > 4096) request.destroy();
      });
      response.on('end', () => resolve(response.statusCode === 200 ? parseReport(text) : null));
      response.on('error', () => resolve(null));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(null));
  });
}

function parseReport(text: string): HealthReport | null {
  try {
    const body = JSON.parse(text) as { service_id?: unknown; revision?: unknown; pid?: unknown };
    if (typeof body.service_id !== 'string' || typeof body.revision !== 'number' || typeof body.pid !== 'number') return null;
    return { serviceId: body.service_id, revision: body.revision, pid: body.pid };
  } catch {
    return null;
  }
}
