// The conformance checks teaminfra does not claim, per protocol revision, each as
// `scenario:check-id` (the CLI's own notation) under the reason it is not ours. Two reasons only:
// the check needs a tool of the suite's reference server (test_simple_text, slow_compute, ...),
// which our catalog of ERP tools never has; or it exercises a capability we do not offer
// (resources, prompts, completion, logging). Every other check must pass, and every entry here
// must still fail (mcp-conformance.test.ts), so that this list cannot hide a fix or a regression.
export interface NotClaimed { reason: string; checks: readonly string[] }

const TOOLS_CALL = ['audio', 'embedded-resource', 'error', 'image', 'mixed-content', 'simple-text', 'with-progress']
  .map((name) => `tools-call-${name}:tools-call-${name}`);
const RESOURCES = ['list', 'read-binary', 'read-text', 'templates-read'].map((name) => `resources-${name}:resources-${name}`);
const PROMPTS = ['get-embedded-resource', 'get-simple', 'get-with-args', 'get-with-image', 'list'].map((name) => `prompts-${name}:prompts-${name}`);

export const NOT_CLAIMED: Record<string, readonly NotClaimed[]> = {
  '2025-11-25': [
    {
      reason: 'calls a tool of the suite\'s reference server',
      checks: [
        ...TOOLS_CALL, 'tools-call-sampling:tools-call-sampling', 'tools-call-elicitation:tools-call-elicitation',
        'elicitation-sep1034-defaults:elicitation-sep1034-general', 'elicitation-sep1330-enums:elicitation-sep1330-general',
        'json-schema-2020-12:json-schema-2020-12-tool-found',
      ],
    },
    {
      reason: 'exercises a capability we do not offer (resources, prompts, completion, logging)',
      checks: [
        ...RESOURCES, 'resources-subscribe:resources-subscribe', 'resources-unsubscribe:resources-unsubscribe', ...PROMPTS,
        'completion-complete:completion-complete', 'logging-set-level:logging-set-level', 'tools-call-with-logging:tools-call-with-logging',
      ],
    },
  ],
  '2026-07-28': [
    {
      reason: 'calls a tool of the suite\'s reference server (its diagnostic, input-required and task fixtures)',
      checks: [
        ...TOOLS_CALL, 'json-schema-2020-12:json-schema-2020-12-tool-found',
        'server-stateless:sep-2575-http-server-no-independent-requests-on-stream', 'server-stateless:sep-2575-missing-capability-http-400',
        'server-stateless:sep-2575-server-no-log-without-loglevel', 'server-stateless:sep-2575-server-rejects-undeclared-capability',
        'input-required-result-basic-elicitation:sep-2322-elicitation-incomplete', 'input-required-result-basic-list-roots:sep-2322-list-roots-incomplete',
        'input-required-result-basic-sampling:sep-2322-sampling-incomplete', 'input-required-result-capability-check:sep-2322-respect-client-capabilities',
        'input-required-result-multi-round:sep-2322-multi-round-r1', 'input-required-result-multiple-input-requests:sep-2322-multiple-inputs-incomplete',
        'input-required-result-non-tool-request:sep-2322-non-tool-incomplete', 'input-required-result-request-state:sep-2322-request-state-incomplete',
        'input-required-result-result-type:sep-2322-result-type-included', 'input-required-result-tampered-state:sep-2322-reject-tampered-state',
        'tasks-capability-negotiation:sep-2663-server-rejects-undeclared-client', 'tasks-capability-negotiation:tasks-per-request-meta-opt-in',
        'tasks-dispatch-and-envelope:sep-2663-durable-create-strong-consistency', 'tasks-dispatch-and-envelope:sep-2663-legacy-task-param-ignored',
        'tasks-dispatch-and-envelope:tasks-immediate-result-shortcut', 'tasks-dispatch-and-envelope:tasks-result-type-complete-on-non-task-responses',
        'tasks-dispatch-and-envelope:tasks-server-directed-creation-no-hint',
        'tasks-lifecycle:sep-2663-cancel-ack-empty-result', 'tasks-lifecycle:sep-2663-result-type-task-on-create',
        'tasks-lifecycle:sep-2663-tasks-get-status-completed', 'tasks-lifecycle:sep-2663-tasks-get-status-failed',
        'tasks-lifecycle:sep-2663-tasks-get-status-working', 'tasks-lifecycle:sep-2663-tool-error-uses-completed-status',
        'tasks-lifecycle:tasks-cancel-terminal-idempotent-ack', 'tasks-lifecycle:tasks-sync-tool-call',
        'tasks-mrtr-composition:sep-2663-mrtr-synchronous-before-task-creation', 'tasks-mrtr-input:sep-2663-tasks-get-status-input-required',
        'tasks-mrtr-input:tasks-mrtr-partial-fulfillment', 'tasks-mrtr-input:tasks-mrtr-tasks-update-resumes',
        'tasks-request-headers:sep-2663-routing-headers-accepted-on-tasks-get', 'tasks-request-headers:sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get',
        'tasks-request-headers:tasks-headers-tolerate-mcp-method-on-tools-call', 'tasks-request-state-removal:tasks-request-state-removal-setup',
        'tasks-required-task-error:sep-2663-server-returns-missing-capability-when-required',
        'tasks-wire-fields:tasks-no-early-ttl-expiry', 'tasks-wire-fields:tasks-no-related-task-meta-on-inlined-result',
        'tasks-wire-fields:tasks-wire-field-renames',
      ],
    },
    {
      reason: 'needs a tool parameter sent as a header (x-mcp-header), which none of our tools declares',
      checks: ['decode-base64', 'no-xmcp-tool', 'reject-invalid-param-chars', 'reject-param-mismatch', 'validate-param-match']
        .map((name) => `http-custom-header-server-validation:sep-2243-server-${name}`),
    },
    {
      reason: 'exercises a capability we do not offer (resources, prompts, completion)',
      checks: [
        ...RESOURCES, ...PROMPTS, 'completion-complete:completion-complete',
        'caching:sep-2549-prompts-list-caching-hints', 'caching:sep-2549-resources-list-caching-hints',
        'caching:sep-2549-resources-templates-list-caching-hints',
      ],
    },
  ],
};
