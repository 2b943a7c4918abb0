// How the logs and metrics capabilities answer what the engine could not give: a bad `since` is
// the caller's (400 on that field), an engine that does not answer or a process without one is
// a conflict with the sentence that says which (src/engine/observe).
import { AppError } from '../../src/core/errors.js';
import { ObserverRefusal, type ServiceObserver } from '../../src/core/service-observer.js';

export function observerOf(observer: ServiceObserver | undefined): ServiceObserver {
  if (!observer) throw new AppError('conflict', 'This server cannot read services\' logs or metrics: it runs without an engine.');
  return observer;
}

export async function answered<T>(read: Promise<T>, field = 'since'): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (!(error instanceof ObserverRefusal)) throw error;
    if (error.kind === 'bad_input') throw new AppError('validation_failed', `The request has invalid fields: ${field}.`, { errors: [{ field, message: error.reason }] });
    throw new AppError('conflict', error.reason);
  }
}
