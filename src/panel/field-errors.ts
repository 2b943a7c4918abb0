// The API's validation sentences beside the fields of a panel form: invoke() refuses a member's
// input with the same `errors` (field, message) as a token's, and each is shown under its field,
// tied to it for screen readers (aria-describedby), the first one announced.
import { AppError, type FieldError } from '../core/errors.js';
import { html, type Html } from './html.js';

/** Refusals a form answers itself, shown on it with what was typed: the input (400), and what exists now (404, 409). */
const ANSWERED_ON_THE_FORM = new Set(['validation_failed', 'not_found', 'conflict']);

/**
 * A refusal of the form's input: its status, and its sentences by field (`form` for one about the
 * request as a whole). Any other refusal (a missing permission) is thrown on: the panel's error
 * page says it.
 */
export function formRefusalOf(error: unknown): { status: number; errors: FieldError[] } {
  if (!(error instanceof AppError) || !ANSWERED_ON_THE_FORM.has(error.code)) throw error;
  return { status: error.status, errors: error.extras.errors ?? [{ field: 'form', message: error.detail }] };
}

/** The attribute that ties an input to its error, when it has one. */
export function describedBy(errors: readonly FieldError[], field: string): Html {
  return errors.some((error) => error.field === field) ? html` aria-describedby="${field}-error" aria-invalid="true"` : html``;
}

/** The sentences about `field`, to be put under it. */
export function errorBeside(errors: readonly FieldError[], field: string): Html {
  const about = errors.filter((error) => error.field === field);
  if (about.length === 0) return html``;
  return html`<p class="field-error" id="${field}-error" role="alert">${about.map((error) => error.message).join(' ')}</p>`;
}

/** Sentences about fields the form does not show (a forged field, the body as a whole). */
export function otherErrors(errors: readonly FieldError[], shown: readonly string[]): Html {
  const others = errors.filter((error) => !shown.includes(error.field));
  return html`${others.map((error) => html`<p class="error" role="alert">${error.field === 'form' ? '' : `${error.field}: `}${error.message}</p>`)}`;
}
