// twolink setup on a port (real time): the mock rig in its own process on a pty, wired wrong with
// `twolink rig --wiring`. Nobody turns the joints here, so the encoder step fails with its fix: what
// this shows is the port path (the board's identity read as it is, the sample clock over a tty, the
// prompts for a person's hands answered by lines on stdin, nothing written, the motors never driven).
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';
import { startPtyRig, type PtyRig } from '../helpers/pty-rig.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from '../helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

let rig: PtyRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
});

describe('twolink setup --port on the pty rig', () => {
  it('reads the board as it is (a misreported count is measured, not refused), then asks for hands; without them, a fail with the fix, exit 1, no file', async () => {
    rig = await startPtyRig('rigs/mock-arm.json', ['--wiring', 'cpr=1:2048']);
    const out = join(mkdtempSync(join(tmpdir(), 'twolink-setup-pty-')), 'my-arm.json');
    // Two Enters: "turn joint 1 ... and press Enter", "let the arm hang freely again ... press Enter".
    const r = await twolink(['setup', '--rig', 'rigs/mock-arm.json', '--port', rig.path, '--json', '--out', out], {
      input: '\n\n',
      timeoutMs: CHILD_GUARD_MS,
    });
    expect(r.code, whyExit(r)).toBe(1);
    const j = lastJson(r);
    expect(j.clock).toBe('real');
    expect(j.steps[0]).toMatchObject({ name: 'board', status: 'warn' });
    expect(j.steps[0].evidence.boardCountsPerRev).toEqual([2048, 2400]);
    expect(j.steps[1]).toMatchObject({ name: 'encoder 1', status: 'fail', corrected: false });
    expect(j.steps[1].fix).toMatch(/check joint 1's encoder/);
    expect(j.rigFile).toBeNull();
    expect(existsSync(out)).toBe(false);
    expect(r.stderr).toMatch(/turn joint 1 90 deg counter-clockwise as above, hold it still, and press Enter/);
    expect(r.stderr).toMatch(/no rig file written/);
    // Real-time priority asked for once the port is open, and said (granted as root, else refused with how to allow it).
    expect(r.stderr).toMatch(
      /twolink setup: (real-time scheduling: SCHED_FIFO 40 granted to the thread that drives the arm|WARNING: no real-time priority \(refused: )/,
    );
  });

  it('with --no-rt it says it did not ask, and goes on the same', async () => {
    rig = await startPtyRig('rigs/mock-arm.json', ['--wiring', 'cpr=1:2048']);
    const out = join(mkdtempSync(join(tmpdir(), 'twolink-setup-pty-')), 'my-arm.json');
    const r = await twolink(['setup', '--rig', 'rigs/mock-arm.json', '--port', rig.path, '--json', '--out', out, '--no-rt'], {
      input: '\n\n',
      timeoutMs: CHILD_GUARD_MS,
    });
    expect(r.code, whyExit(r)).toBe(1);
    expect(lastJson(r).steps[1]).toMatchObject({ name: 'encoder 1', status: 'fail' });
    expect(r.stderr).toMatch(/twolink setup: WARNING: no real-time priority \(not asked for: --no-rt\)/);
  });
});
