// Task ids bound to the token that started the task, with no state kept.
import { describe, expect, it } from 'vitest';
import { targetOfTask, taskIdOf } from '../../src/mcp/task-handles.js';

describe('task handles', () => {
  const operationId = 'op_0mwtjltyn0vo06xsbc5q';

  it('gives back the operation to the token that started the task, whatever node checks it', () => {
    expect(targetOfTask(taskIdOf(operationId, 'tok_a'), 'tok_a')).toBe(operationId);
    expect(targetOfTask(taskIdOf('dec_0mwtjltyn0vo06xsbc5q', 'tok_a'), 'tok_a')).toBe('dec_0mwtjltyn0vo06xsbc5q');
  });

  it('gives nothing to another token, for a bare id, a forged or a tampered handle', () => {
    const handle = taskIdOf(operationId, 'tok_a');
    expect(targetOfTask(handle, 'tok_b')).toBeUndefined();
    expect(targetOfTask(operationId, 'tok_a')).toBeUndefined();
    expect(targetOfTask(`op_0mwtjltyn0vo06xsbc5r.${handle.split('.')[1]}`, 'tok_a')).toBeUndefined();
    expect(targetOfTask(`${handle}.extra`, 'tok_a')).toBeUndefined();
    expect(targetOfTask(`srv_0mwtjltyn0vo06xsbc5q.${handle.split('.')[1]}`, 'tok_a')).toBeUndefined();
  });
});
