// `twolink run --controller FILE --mock` in real time, as the issue asks: the PD + gravity example
// completes the reach; a controller that throws stops the arm with a fault naming the file (exit 1).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, twolink } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-controller-rt-'));

describe('twolink run --controller (real time, mock rig in its thread)', () => {
  it('examples/controllers/pd-gravity.js completes the reach', async () => {
    const r = await twolink(
      [
        'run',
        '--controller',
        'examples/controllers/pd-gravity.js',
        '--rig',
        'rigs/mock-arm.json',
        '--mock',
        '--rt',
        '--traj',
        'reach',
        '--json',
      ],
      { timeoutMs: 120_000 },
    );
    const s = lastJson(r);
    expect(s.stop, r.stderr).toEqual({ kind: 'done' });
    expect(r.code).toBe(0);
    expect(s.tracking.samples).toBeGreaterThan(100);
    for (const e of s.tracking.rmsDeg) expect(e).toBeLessThan(5);
  });

  it('a controller that throws: fault:controller naming the file, exit code 1', async () => {
    const file = join(dir, 'throws.js');
    writeFileSync(file, "export default () => ({ update() { throw new Error('no gains'); } });");
    const r = await twolink(['run', '--controller', file, '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--traj', 'reach', '--json'], {
      timeoutMs: 120_000,
    });
    expect(r.code).toBe(1);
    expect(lastJson(r).stop).toEqual({ kind: 'fault', fault: { kind: 'controller', message: `${file}: update threw: no gains` } });
  });
});
