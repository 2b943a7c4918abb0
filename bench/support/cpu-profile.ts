// Sums a V8 CPU profile (`--cpu-prof`) by package and by function, self and inclusive time, for
// the profile scripts in bench/ (profile-list-services.ts, profile-mcp.ts).
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
export interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

function packageOf(url: string): string {
  if (!url) return '(native / vm)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 6) : url;
}

export function summarize(profile: Profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + delta);
    total += delta;
  });
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const [id, micros] of self) {
    const frame = byId.get(id)!.callFrame;
    const where = frame.url ? `${packageOf(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
    const pkg = frame.functionName === '(idle)' ? '(idle)' : frame.functionName === '(garbage collector)' ? '(gc)' : packageOf(frame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
  }
  // Inclusive time: a sample counts for every distinct function on its stack. For async
  // functions this is the synchronous part of each resumption, which is where their CPU goes.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!frame.url || frame.url.includes('node_modules') || frame.url.startsWith('node:')) continue;
      const key = `${frame.functionName || '(anonymous)'} ${packageOf(frame.url)}:${frame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
    }
  }
  const busy = total - (byPackage.get('(idle)') ?? 0);
  const top = (map: Map<string, number>, count: number) =>
    [...map].filter(([key]) => !key.startsWith('(idle)')).sort((x, y) => y[1] - x[1]).slice(0, count);
  console.log(`\nCPU profile of the server: ${(busy / 1e6).toFixed(2)} s busy of ${(total / 1e6).toFixed(2)} s`);
  console.log('self time by package / file (share of busy time):');
  for (const [key, micros] of top(byPackage, 20)) console.log(`  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${key}`);
  console.log('self time by function:');
  for (const [key, micros] of top(byFunction, 30)) console.log(`  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${key}`);
  console.log('inclusive time of our own functions (teaminfra code only):');
  for (const [key, micros] of top(inclusive, 25)) console.log(`  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${key}`);
}

/**
 * Summarizes the profile `--cpu-prof` wrote into `profileDir`; with PROFILE_KEEP set, also keeps
 * a copy (for Chrome DevTools or speedscope) under the temporary directory, named after `name`.
 */
export function summarizeProfileIn(profileDir: string, name: string): void {
  const file = readdirSync(profileDir).find((entry) => entry.endsWith('.cpuprofile'));
  if (!file) throw new Error('no .cpuprofile was written');
  summarize(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile);
  if (process.env.PROFILE_KEEP) {
    const kept = join(tmpdir(), `teaminfra-${name}-${Date.now()}.cpuprofile`);
    copyFileSync(join(profileDir, file), kept);
    console.log(`profile kept at ${kept}`);
  }
}
