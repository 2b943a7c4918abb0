// A webhook receiver that answers decisions: it approves a stop or a redeploy on its own (the
// service comes back as it was) and leaves everything else, a delete, a restore, a question, to a
// person in the panel. Its token needs decisions:answer and must not be the token that asks.
//   WEBHOOK_SECRET=whsec_... TEAMINFRA_URL=https://... TEAMINFRA_TOKEN=tinf_... node decision-receiver.js
import { createServer } from 'node:http';
import { verifyWebhook } from 'teaminfra';

const { WEBHOOK_SECRET, TEAMINFRA_URL, TEAMINFRA_TOKEN, PORT = '4000' } = process.env;
const APPROVED_ON_ITS_OWN = new Set(['stop_erp_service', 'redeploy_erp_service']);

/** The API's status; only a 5xx is worth another try (a 409 says it was answered first, or expired). */
async function answer(decisionId, answer) {
  const response = await fetch(`${TEAMINFRA_URL}/api/decisions/${decisionId}/answer`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TEAMINFRA_TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ answer }),
  });
  if (response.status >= 500) throw new Error(`the API answered ${response.status}`);
  return response.status;
}

createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += chunk;
  let event;
  try {
    event = verifyWebhook(WEBHOOK_SECRET, request.headers, body);
  } catch {
    return response.writeHead(400).end();
  }
  if (event.type === 'decision.needed') {
    const { decision, action } = event.data;
    try {
      if (action && APPROVED_ON_ITS_OWN.has(action.capability)) {
        const status = await answer(decision.id, 'approve');
        console.log(`${decision.id}: approve ${action.capability} on ${action.service_id}: ${status}`);
      } else {
        console.log(`${decision.id}: left for a person`);
      }
    } catch (error) {
      // Not acknowledged: teaminfra delivers it again later, with the same webhook-id.
      console.error(`${decision.id}: ${error.message}`);
      return response.writeHead(503).end();
    }
  }
  response.writeHead(204).end();
}).listen(Number(PORT), () => console.log(`decision receiver listening on port ${PORT}`));
