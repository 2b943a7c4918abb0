// A restore's swap with nothing dropped. Before the serving web container stops, the proxy is
// told to send the service's requests to a name nothing answers yet: it holds each new request,
// dialling again every 250 ms for up to 60 s (caddy-config.ts), while those it had sent to the
// old container finish there (PROXY_DRAIN_MS). The restored web container then answers under
// that name as well as its own (service-start.ts inherits the row's upstream), so the held
// requests are served by it. The row is written first: a push of the routes from the database
// (the proxy keeper, a restart of serve) holds them too.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerSpec } from '../../driver.js';
import type { DockerDriverOptions } from '../docker-driver-options.js';
import { heldUpstreamName } from './held-upstream.js';
import { PROXY_DRAIN_MS, routeServer } from './route-server.js';

/**
 * Holds the service's new requests and lets those in flight finish; a no-op for a service the
 * proxy does not serve now. A restore resumed after a crash finds the row held already and
 * pushes the route again: the crash may have come between the row and the push.
 */
export async function holdRequests(options: DockerDriverOptions, server: ServerSpec, serviceId: string): Promise<void> {
  const row = await options.db.selectFrom('erp_services').select('proxy_upstream').where('id', '=', serviceId).executeTakeFirst();
  if (!row?.proxy_upstream) return;
  const [name, port] = row.proxy_upstream.split(':');
  if (name !== heldUpstreamName(serviceId)) {
    await options.db.updateTable('erp_services').set({ proxy_upstream: `${heldUpstreamName(serviceId)}:${port}` })
      .where('id', '=', serviceId).execute();
  }
  await routeServer(options, server);
  await sleep(PROXY_DRAIN_MS);
}
