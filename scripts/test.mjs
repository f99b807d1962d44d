// `npm test` after the build and the typecheck: the unit half, then the realtime half, each run
// whatever the other did (a failing unit test must not hide the realtime results), and a non-zero
// exit if either failed. Extra arguments go to both (`npm test -- --reporter=dot`).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const extra = process.argv.slice(2);
const results = ['unit', 'realtime'].map((project) => {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [vitest, 'run', '--project', project, ...extra], { stdio: 'inherit' });
  const code = r.status ?? 1;
  return { project, code, why: r.signal ? `killed by ${r.signal}` : code === 0 ? 'passed' : `failed (exit code ${code})`, seconds: (Date.now() - t0) / 1000 };
});
process.stdout.write(`\nnpm test: ${results.map((r) => `${r.project} ${r.why} in ${r.seconds.toFixed(0)} s`).join('; ')}\n`);
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1;
