// What the tests and the tools write stays out of node_modules (issue 35, "Smaller": once vitest had
// written its cache to node_modules/.vite, npm's hidden lockfile was out of date and every
// `npx twolink` read the whole dependency tree again, 17-32 s), and out of git's sight.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import { ROOT } from './helpers/cli.js';

describe('the tree the tools write', () => {
  it("vitest's cache is outside node_modules, and git ignores it", () => {
    const dir = (config as { cacheDir?: string }).cacheDir;
    expect(dir).toBeDefined();
    const abs = resolve(ROOT, dir!);
    const rel = relative(resolve(ROOT, 'node_modules'), abs);
    expect(rel.startsWith('..') || isAbsolute(rel), `${abs} is inside node_modules`).toBe(true);
    // check-ignore exits 0 when the path is ignored
    expect(() => execFileSync('git', ['-C', ROOT, 'check-ignore', '-q', `${dir}/x`])).not.toThrow();
  });

  it("serialport's binding types are imported with resolution-mode 'require' everywhere (no tsconfig paths entry makes them resolve)", () => {
    const files = execFileSync('git', ['-C', ROOT, 'grep', '-l', "from '@serialport/bindings-interface'", '--', 'src', 'tests'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(0);
    // Each import statement whole (Prettier may break its `with { ... }` over lines): it must carry the attribute.
    const bare = files.flatMap((f) => {
      const text = readFileSync(`${ROOT}/${f}`, 'utf8');
      const imports = text.match(/import\b[^;]*?from '@serialport\/bindings-interface'[^;]*;/g) ?? [];
      return imports.filter((i) => !/with\s*\{\s*'resolution-mode':\s*'require',?\s*\}/.test(i)).map((i) => `${f}: ${i}`);
    });
    expect(bare).toEqual([]);
  });
});
