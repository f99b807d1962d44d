// Time limits in the tests are hang guards that hold on a heavily loaded machine: scaled from what a
// quiet machine needs (tests/helpers/hang-guard.ts), by TWOLINK_TEST_TIMEOUT_SCALE if set, and no test
// writes a bare limit of its own (the fixed 60 s limits failed at load 4-14). `npm test` runs both
// halves whatever the first did.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import { HEAVY_LOAD_FACTOR, hangGuardMs, timeoutScale } from './helpers/hang-guard.js';

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

describe('hang guards', () => {
  it('scale with the heavy-load factor and TWOLINK_TEST_TIMEOUT_SCALE; a bad scale is said at once', () => {
    expect(hangGuardMs(60_000, {})).toBe(60_000 * HEAVY_LOAD_FACTOR);
    expect(hangGuardMs(60_000, { TWOLINK_TEST_TIMEOUT_SCALE: '2' })).toBe(120_000 * HEAVY_LOAD_FACTOR);
    expect(timeoutScale({ TWOLINK_TEST_TIMEOUT_SCALE: '' })).toBe(1);
    for (const bad of ['0', '-1', 'fast', 'Infinity'])
      expect(() => timeoutScale({ TWOLINK_TEST_TIMEOUT_SCALE: bad })).toThrow(`TWOLINK_TEST_TIMEOUT_SCALE=${bad}: give a positive number`);
  });

  it("every project's default limit is a hang guard well above the old fixed 60 s", () => {
    const projects = (config.test?.projects ?? []) as { test: { name: string; testTimeout: number; hookTimeout: number } }[];
    expect(projects.map((p) => p.test.name)).toEqual(['unit', 'realtime']);
    for (const p of projects) {
      expect(p.test.testTimeout).toBeGreaterThanOrEqual(hangGuardMs(150_000));
      expect(p.test.hookTimeout).toBeGreaterThanOrEqual(hangGuardMs(150_000));
    }
  });

  it('no test writes a bare time limit: each goes through hangGuardMs', () => {
    // pumpUntil (helpers/firmata.ts) and twolink (helpers/cli.ts) scale the limits given to them.
    const bare = /^\s*\}, [0-9_]+\);$|timeout: [0-9_]+\b|maxRealMs: [0-9_]+|setTimeout\([^;]*reject\([^;]*\), [0-9_]+\)/;
    const found = files('tests').flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => [f, i + 1, line] as const)
        .filter(([, , line]) => bare.test(line) && !line.includes('hangGuardMs') && !line.includes('pumpUntil(')),
    );
    expect(found.map(([f, n, l]) => `${f}:${n}: ${l.trim()}`)).toEqual([]);
  });

  it('npm test runs the realtime half even when the unit half failed, and fails if either did', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toBe('npm run build && tsc -p tsconfig.test.json && npm run lint && node scripts/test.mjs');
    // A filter that matches no test file: vitest fails the unit half ("no test files"); the realtime half still runs.
    const r = spawnSync(process.execPath, ['scripts/test.mjs', 'no-such-test-file-h3'], { encoding: 'utf8', timeout: hangGuardMs(60_000) });
    expect(r.status, r.stderr).toBe(1);
    // One unit half per Node (TWOLINK_UNIT_NODES adds Node 22 and 24 in CI), then the realtime half, each naming its Node.
    expect(r.stdout).toMatch(
      /^npm test: (unit on Node v[\d.]+ failed \(exit code 1\) in \d+ s; )+realtime on Node v[\d.]+ failed \(exit code 1\) in \d+ s$/m,
    );
  });
});
