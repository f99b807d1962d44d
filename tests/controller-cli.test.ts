// `twolink run --controller FILE` at the command line: a module that cannot be used is one line naming
// the file and exit code 2, before anything moves (the built CLI, as users run it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { twolink } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-controller-cli-'));
const write = (name: string, body: string): string => {
  const f = join(dir, name);
  writeFileSync(f, body);
  return f;
};
const run = (controller: string, extra: string[] = []) =>
  twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--json', '--controller', controller, ...extra]);

describe('twolink run --controller: bad modules are input errors', () => {
  const cases: [string, () => string, RegExp][] = [
    ['a missing file', () => join(dir, 'nope.js'), /^twolink: controller .*nope\.js: no such file/],
    [
      'a syntax error',
      () => write('syntax.js', 'export default () => ({ update( })'),
      /^twolink: controller .*syntax\.js: cannot import it: SyntaxError: /,
    ],
    // An enum: TypeScript that Node 22.18+ and 24 do not run either (their type stripping erases
    // annotations only), so the case holds on every supported Node.
    [
      'TypeScript source',
      () => write('law.ts', 'enum Gain { Zero = 0 }\nexport default (ctx: unknown) => ({ update: () => [Gain.Zero, 0] });'),
      /^twolink: controller .*law\.ts: cannot import it: .*\(compile TypeScript to JavaScript first/,
    ],
    [
      'no factory',
      () => write('nofactory.js', 'export const update = () => [0, 0];'),
      /the default export must be a function createController\(context\), got undefined$/,
    ],
    [
      'a factory that throws',
      () => write('throws.js', "export default (ctx) => { throw new Error('needs ' + ctx.rig.joints + ' gains'); };"),
      /createController\(context\) threw: needs 2 gains$/,
    ],
  ];
  for (const [what, file, message] of cases) {
    it(what, async () => {
      const r = await run(file());
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    });
  }

  it('--controller with --no-feedforward is refused (the controller replaces feedforward + PID)', async () => {
    const r = await run('examples/controllers/pd-gravity.js', ['--no-feedforward']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^twolink: --controller replaces twolink's feedforward \+ PID: drop --feedforward \/ --no-feedforward\n$/);
  });
});
