// The two eras of the protocol one server answers, named once for every file that answers
// differently in each (long actions, task views, request screening), so none of them imports
// another only for this name.

/** `legacy`: 2025-11-25 and older (opened by initialize); `modern`: 2026-07-28 (no initialize). */
export type ProtocolEra = 'legacy' | 'modern';
