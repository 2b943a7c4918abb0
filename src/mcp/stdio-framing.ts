// The checks of one stdio line before any server sees it, the stdio twin of json-rpc.ts. The
// SDK's stdio transport skips a line that is not JSON without a word, and reports JSON that is
// not a JSON-RPC message only to its own error log, so the assistant waits for an answer that
// never comes. Here such a line is answered (-32700, -32600), and so is a request naming in its
// `_meta` a protocol version we do not serve (-32022), whichever era the connection is in; every
// other line goes on to the SDK unchanged.
import { Transform, type TransformCallback } from 'node:stream';
import { isJSONRPCRequest, PROTOCOL_VERSION_META_KEY, STDIO_DEFAULT_MAX_BUFFER_SIZE, type JSONRPCErrorResponse } from '@modelcontextprotocol/server';
import { echoableIdOf, isJsonRpcMessage, NOT_A_MESSAGE, notJson, SERVED_PROTOCOL_VERSIONS, unsupportedVersion, type RpcErrorBody } from './rpc-errors.js';

/** Lines in, the acceptable ones out (newline-terminated); `answer` receives the error for each refused line. */
export function screenedLines(answer: (error: JSONRPCErrorResponse) => void): Transform {
  let pending = '';
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      pending += chunk.toString('utf8');
      if (pending.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
        done(new Error(`A line on stdin exceeded ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes without a newline.`));
        return;
      }
      let end: number;
      while ((end = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, end).replace(/\r$/, '');
        pending = pending.slice(end + 1);
        const refusal = refusalOf(line);
        if (refusal === 'blank') continue;
        if (refusal) answer({ jsonrpc: '2.0', id: refusal.id as never, error: refusal.error });
        else this.push(`${line}\n`);
      }
      done();
    },
  });
}

/** Why a line is refused, 'blank' for an empty line (ignored), or undefined when it passes. */
export function refusalOf(line: string): { id: string | number | null; error: RpcErrorBody } | 'blank' | undefined {
  if (line.trim() === '') return 'blank';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { id: null, error: notJson('the line') };
  }
  const id = echoableIdOf(parsed);
  if (!isJsonRpcMessage(parsed)) return { id, error: NOT_A_MESSAGE };
  if (!isJSONRPCRequest(parsed)) return undefined;
  const claimed = (parsed.params?._meta as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
  if (claimed !== undefined && (typeof claimed !== 'string' || !SERVED_PROTOCOL_VERSIONS.includes(claimed))) {
    return { id, error: unsupportedVersion(typeof claimed === 'string' ? claimed : JSON.stringify(claimed)) };
  }
  return undefined;
}
