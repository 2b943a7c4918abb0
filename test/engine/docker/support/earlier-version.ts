// An earlier version of teaminfra, compiled from this checkout's git history, to run its real
// `serve` and `admin` beside today's: what an operator ran before an upgrade. Its tree comes
// from `git archive`, uses this checkout's node_modules (a symlink) and is compiled with its own
// tsconfig.json; the build is kept under the system's temp folder by commit (and by checkout, for
// the symlink), so a second run starts at once.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../../../src/package-root.js';
import { admin, startServe, type ServeProcess } from '../../../support/cli.js';

/** git archive, tar and tsc of the whole tree: seconds alone, a minute or two on a loaded machine. */
const BUILD_TIMEOUT_MS = 5 * 60_000;

export interface EarlierVersion {
  commit: string;
  /** Its `teaminfra admin ARGS --data-dir DATA_DIR`, which must succeed; its JSON output. */
  admin(dataDir: string, args: string[]): Promise<Record<string, any>>;
  /** Its `teaminfra serve` on a free port (test/support/cli.ts's startServe). */
  serve(dataDir: string, env?: NodeJS.ProcessEnv): Promise<ServeProcess>;
}

/** The build of `commit` (made now unless a run made it before); fails saying what to do when the commit is not in this checkout. */
export function earlierVersion(commit: string): EarlierVersion {
  const cli = join(builtTree(commit), 'dist', 'src', 'cli', 'main.js');
  return {
    commit,
    admin: (dataDir, args) => admin(dataDir, args, undefined, undefined, cli),
    serve: (dataDir, env = {}) => startServe(dataDir, [], env, cli),
  };
}

function builtTree(commit: string): string {
  const checkout = createHash('sha256').update(packageRoot).digest('hex').slice(0, 8);
  const tree = join(tmpdir(), `teaminfra-build-${commit.slice(0, 12)}-${checkout}`);
  if (existsSync(join(tree, 'dist', 'src', 'cli', 'main.js'))) return tree;
  assertCommitPresent(commit);
  // Built aside and renamed into place: a build cut short, or another run's at the same time, is never taken as done.
  const building = mkdtempSync(`${tree}.building-`);
  try {
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', packageRoot, commit, building], { timeout: BUILD_TIMEOUT_MS, stdio: 'pipe' });
    symlinkSync(join(packageRoot, 'node_modules'), join(building, 'node_modules'), 'dir');
    try {
      execFileSync(process.execPath, [join(building, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
        { cwd: building, timeout: BUILD_TIMEOUT_MS, stdio: 'pipe' });
    } catch (error) {
      // Type errors against this checkout's newer dependencies' types leave the emitted JavaScript
      // as it was: only a build that emitted nothing is a failure.
      if (!existsSync(join(building, 'dist', 'src', 'cli', 'main.js'))) throw error;
    }
    try {
      renameSync(building, tree);
    } catch (error) {
      // Another run finished first: its build is the same.
      if (!existsSync(join(tree, 'dist', 'src', 'cli', 'main.js'))) throw error;
    }
  } catch (error) {
    const output = (error as { stdout?: Buffer; stderr?: Buffer });
    throw new Error(`Building teaminfra at commit ${commit} failed: ${(error as Error).message}\n${output.stdout ?? ''}${output.stderr ?? ''}`);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return tree;
}

function assertCommitPresent(commit: string): void {
  try {
    execFileSync('git', ['-C', packageRoot, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'pipe', timeout: 30_000 });
  } catch {
    throw new Error(`The upgrade suite runs teaminfra as it was at commit ${commit}, which is not in the git history of ${packageRoot}. ` +
      'Run it in a git checkout that has that commit (a shallow clone: "git fetch --unshallow").');
  }
}
