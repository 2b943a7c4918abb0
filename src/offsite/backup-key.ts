// A team's backup key, in the age format (age-encryption.org/v1, X25519): every off-site copy is
// encrypted to its recipient before it leaves this process, so the store never sees a byte of a
// backup in clear; the team opens a downloaded object without us, with Debian's `age` tool and
// the identity shown once when the key was made. Streamed both ways (age's STREAM: 64 KiB
// chunks, each authenticated), never a whole backup in memory.
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

export interface BackupKey {
  /** AGE-SECRET-KEY-1...: what opens the copies; sealed at rest, shown once. */
  identity: string;
  /** age1...: what the copies are encrypted to. */
  recipient: string;
}

/** The one command that opens a downloaded copy, shown with the key. */
export const DECRYPT_COMMAND = 'age -d -i key.txt OBJECT > backup.tar.zst';

export async function makeBackupKey(): Promise<BackupKey> {
  const age = await import('age-encryption');
  const identity = await age.generateIdentity();
  return { identity, recipient: await age.identityToRecipient(identity) };
}

/** `plain` encrypted to `recipient`, as it is read. */
export async function encrypting(plain: Readable, recipient: string): Promise<Readable> {
  const age = await import('age-encryption');
  const encrypter = new age.Encrypter();
  encrypter.addRecipient(recipient);
  const encrypted = await encrypter.encrypt(Readable.toWeb(plain) as unknown as ReadableStream<Uint8Array>);
  return Readable.fromWeb(encrypted as unknown as WebReadableStream<Uint8Array>);
}

/** `sealed` opened with `identity`, as it is read; a changed byte or a cut object fails the stream. */
export async function decrypting(sealed: Readable, identity: string): Promise<Readable> {
  const age = await import('age-encryption');
  const decrypter = new age.Decrypter();
  decrypter.addIdentity(identity);
  const plain = await decrypter.decrypt(Readable.toWeb(sealed) as unknown as ReadableStream<Uint8Array>);
  return Readable.fromWeb(plain as unknown as WebReadableStream<Uint8Array>);
}
