// What the teaminfra package exports for other programs: receivers verify our webhooks with this.
export { verifyWebhook, WebhookVerificationError, TOLERANCE_SECONDS } from './webhooks/signing.js';
export { EVENT_TYPES } from './webhooks/event-catalog.js';
