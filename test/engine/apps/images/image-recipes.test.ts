// What build-app-images relies on without an engine: every image a bundled definition names has
// an offline recipe whose files exist, the content tag follows the recipe, and a program that
// overruns its deadline is stopped with a sentence.
import { describe, expect, it } from 'vitest';
import { bundledApp, BUNDLED_APP_NAMES } from '../../../../src/engine/apps/bundled-apps.js';
import { recipeHash, splitImage } from '../../../../src/engine/apps/images/build-debian-image.js';
import { PROXY_ADMIN_SOCKET, PROXY_IMAGE, recipeOf, type DebianImageRecipe } from '../../../../src/engine/apps/images/image-recipes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../../src/package-root.js';
import { ProgramError, runProgram } from '../../../../src/engine/apps/images/run-program.js';

describe('image recipes', () => {
  it('give every image of every bundled definition a recipe, and every file a recipe adds exists', () => {
    for (const name of BUNDLED_APP_NAMES) {
      for (const container of bundledApp(name)!.containers) {
        const recipe = recipeOf(container.image);
        expect(recipe, `${name}: ${container.image}`).toBeDefined();
        if (recipe?.kind === 'debian') expect(recipeHash(recipe)).toMatch(/^[0-9a-f]{12}$/);
      }
    }
  });

  it('change the content tag when the recipe changes, and only then', () => {
    const recipe = recipeOf('teaminfra-tryton:6.0') as DebianImageRecipe;
    expect(recipeHash({ ...recipe })).toBe(recipeHash(recipe));
    expect(recipeHash({ ...recipe, packages: [...recipe.packages, 'tryton-modules-purchase'] })).not.toBe(recipeHash(recipe));
  });

  it('split an image name into repository and tag', () => {
    expect(splitImage('teaminfra-tryton:6.0')).toEqual(['teaminfra-tryton', '6.0']);
    expect(splitImage('registry:5000/shop')).toEqual(['registry:5000/shop', 'latest']);
  });
});

describe('runProgram', () => {
  it('stops a program that overruns its deadline and says so', async () => {
    const started = Date.now();
    await expect(runProgram(['sleep', '30'], { timeoutMs: 300, what: 'wait' })).rejects.toThrow('sleep did not finish in 0 s while trying to wait; it was stopped.');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('turns a failure into a sentence with the end of its output', async () => {
    const failure = await runProgram(['sh', '-c', 'echo "E: Unable to locate package nope" >&2; exit 100'], { timeoutMs: 5_000, what: 'install nope' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProgramError);
    expect((failure as Error).message).toBe('sh failed (exit 100) while trying to install nope: E: Unable to locate package nope');
  });
});

describe('the proxy recipe', () => {
  it('starts Caddy with its admin API on the socket teaminfra reaches it by', () => {
    const recipe = recipeOf(PROXY_IMAGE) as DebianImageRecipe;
    expect(recipe.packages).toContain('caddy');
    const bootstrap = JSON.parse(readFileSync(join(packageRoot, 'src/engine/apps/images/files', recipe.files[0]!.source), 'utf8')) as { admin: { listen: string } };
    expect(bootstrap.admin.listen).toBe(`unix/${PROXY_ADMIN_SOCKET}`);
    expect(recipe.changes.cmd).toContain(recipe.files[0]!.target);
  });
});
