// A hint, within one process, that an operation was queued, so the worker takes it now rather
// than at its next poll. Only a hint: workers in other processes find it by polling.
import { EventEmitter } from 'node:events';

const signal = new EventEmitter();
signal.setMaxListeners(0);

export function announceQueued(): void {
  signal.emit('queued');
}

export function onQueued(listener: () => void): () => void {
  signal.on('queued', listener);
  return () => signal.off('queued', listener);
}
