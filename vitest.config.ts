import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Black-box suites start servers and child processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // MCP action tools wait for their operation; suites without the engine want the answer at once.
    env: { TEAMINFRA_MCP_WAIT_SECONDS: '0' },
  },
});
