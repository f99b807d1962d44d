// A project that type-checks against twolink's public types needs no `skipLibCheck` (issue 35,
// "Smaller"): twolink's declarations import serialport's binding types with the resolution mode that
// package's `exports` gives types for (`require`), so a strict NodeNext project compiles them.
// (With `moduleResolution: bundler`, serialport's own @serialport/stream declarations fail the same
// way; that is upstream's packaging, not ours, and this test does not claim it.)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

describe("twolink's public types", () => {
  it(
    'a strict NodeNext project importing twolink and twolink/testing type-checks with skipLibCheck off',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'twolink-consumer-'));
      try {
        mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
        symlinkSync(ROOT, join(dir, 'node_modules', 'twolink'), 'dir');
        symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
        symlinkSync(join(ROOT, 'node_modules', 'undici-types'), join(dir, 'node_modules', 'undici-types'), 'dir');
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
        const compilerOptions = {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        };
        writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['use.ts'] }));
        writeFileSync(
          join(dir, 'use.ts'),
          [
            "import { buildPath, describeStop, type StopReason } from 'twolink';",
            "import * as testing from 'twolink/testing';",
            "const stop: StopReason = { kind: 'done' };",
            'console.log(describeStop(stop), typeof buildPath, Object.keys(testing).length);',
          ].join('\n'),
        );
        let out = '';
        try {
          execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' });
        } catch (e) {
          out = String((e as { stdout?: string }).stdout ?? e);
        }
        expect(out).toBe('');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    hangGuardMs(60_000),
  );
});
