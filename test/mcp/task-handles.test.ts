// Task ids bound to the token that started the task, with no state kept, keyed by the secrets key.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { targetOfTask, taskHandleKeys, taskIdOf } from '../../src/mcp/task-handles.js';
import { tempDataDir } from '../support/fixtures.js';

describe('task handles', () => {
  const operationId = 'op_0mwtjltyn0vo06xsbc5q';
  const keys = taskHandleKeys(tempDataDir());

  it('gives back the operation to the token that started the task, whatever node checks it', () => {
    expect(targetOfTask(taskIdOf(operationId, 'tok_a', keys), 'tok_a', keys)).toBe(operationId);
    expect(targetOfTask(taskIdOf('dec_0mwtjltyn0vo06xsbc5q', 'tok_a', keys), 'tok_a', keys)).toBe('dec_0mwtjltyn0vo06xsbc5q');
  });

  it('gives nothing to another token, for a bare id, a forged or a tampered handle', () => {
    const handle = taskIdOf(operationId, 'tok_a', keys);
    expect(targetOfTask(handle, 'tok_b', keys)).toBeUndefined();
    expect(targetOfTask(operationId, 'tok_a', keys)).toBeUndefined();
    expect(targetOfTask(`op_0mwtjltyn0vo06xsbc5r.${handle.split('.')[1]}`, 'tok_a', keys)).toBeUndefined();
    expect(targetOfTask(`${handle}.extra`, 'tok_a', keys)).toBeUndefined();
    expect(targetOfTask(`srv_0mwtjltyn0vo06xsbc5q.${handle.split('.')[1]}`, 'tok_a', keys)).toBeUndefined();
  });

  it('cannot be made from the token id alone, nor with another secrets key', () => {
    // A MAC keyed by what is public (the token id) is not accepted.
    const publicMac = createHmac('sha256', 'tok_a').update(operationId).digest().subarray(0, 16).toString('base64url');
    expect(targetOfTask(`${operationId}.${publicMac}`, 'tok_a', keys)).toBeUndefined();
    const elsewhere = taskHandleKeys(tempDataDir());
    expect(targetOfTask(taskIdOf(operationId, 'tok_a', elsewhere), 'tok_a', keys)).toBeUndefined();
  });

  it('still accepts a handle made before the secrets key was rotated (the previous key)', () => {
    const before = taskHandleKeys(tempDataDir());
    const afterRotation = [taskHandleKeys(tempDataDir())[0]!, before[0]!];
    expect(targetOfTask(taskIdOf(operationId, 'tok_a', before), 'tok_a', afterRotation)).toBe(operationId);
  });
});
