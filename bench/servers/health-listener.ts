// The one listener that answers the health paths of the benchmark's 10,000 services (every
// service's url names its port): 200 to every GET, counted; the parent asks 'count'.
import { createServer } from 'node:http';
import { listenUntilStopped } from '../support/child-server.js';

let answered = 0;
const server = createServer((_request, response) => {
  answered += 1;
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
});
process.on('message', (message) => {
  if (message === 'count') process.send?.({ type: 'count', answered });
});
listenUntilStopped(server);
