// Every event the engine writes is one a webhook can subscribe to and the OpenAPI document
// describes; and each service state maps to one of them.
import { describe, expect, it } from 'vitest';
import { ENGINE_EVENT_TYPES, serviceEventType } from '../../src/engine/event-types.js';
import { EVENT_TYPES } from '../../src/webhooks/event-catalog.js';

describe('engine event types', () => {
  it('are all in the webhook event catalog', () => {
    expect(ENGINE_EVENT_TYPES.filter((type) => !EVENT_TYPES.includes(type))).toEqual([]);
  });

  it('name a service reaching running after a redeploy differently from after a start', () => {
    expect(serviceEventType('running', 'start')).toBe('service.started');
    expect(serviceEventType('running', 'redeploy')).toBe('service.redeployed');
    expect(serviceEventType('stopped', 'create')).toBe('service.provisioned');
    expect(serviceEventType('stopped', 'delete', true)).toBe('service.deleted');
  });

  it('announce a copy once it exists with its data', () => {
    expect(serviceEventType('stopped', 'copy')).toBe('copy.created');
    expect(serviceEventType('failed', 'copy')).toBe('service.failed');
  });
});
