// A deadline on silence for a body we send: an upload may take as long as it keeps moving, and
// is aborted once no byte has moved for `idleMs` (the engine stopped reading, or the source
// stopped producing). undici bounds the wait for an answer, not the sending of a body.
import { Readable } from 'node:stream';

export function watchForSilence(
  body: Readable | Buffer, idleMs: number, onSilent: () => void,
): { body: Readable | Buffer; stop(): void } {
  if (Buffer.isBuffer(body)) return { body, stop: () => undefined };
  const timer = setTimeout(onSilent, idleMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  async function* watched(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) {
        timer.refresh();
        yield chunk as Buffer;
        // The chunk was taken by the connection: time until the next one is silence again.
        timer.refresh();
      }
    } finally {
      stop();
    }
  }
  // Not object mode: only a few chunks are read ahead of what the connection took.
  return { body: Readable.from(watched(), { objectMode: false }), stop };
}
