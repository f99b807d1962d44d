// tune and identify on a port, over our Uno firmware in simavr (`twolink rig --firmware --pty`), each
// once (issue 33 item 6; `npm run bench -- --only tune-port` runs each 3 times, quiet and with six CPU
// hogs). Both complete and write their rig file; each asked for real-time priority for the thread that
// drives the arm and for its I/O threads (the serial reads), and the firmware's watchdog never had to
// stop the motors. Waits for the processes to end, never for a time.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi, type TestContext } from 'vitest';
import { portRunOnFirmware, type PortCommand, type PortRun } from '../../src/bench/tune-port.js';
import { RIG_STARVED_ATTEMPTS, RIG_STARVED_MS } from '../../src/mock/starvation.js';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { notJudged } from '../helpers/not-judged.js';

vi.setConfig({ testTimeout: hangGuardMs(300_000), hookTimeout: hangGuardMs(60_000) });

const INSTALL =
  'simavr is not installed: sudo apt-get install simavr libsimavr-dev gcc-avr avr-libc arduino-core-avr (.ci/run installs them)';
const needSimavr = (): void => {
  if (!existsSync('/usr/include/simavr/sim_avr.h') || !existsSync('/usr/bin/avr-gcc')) throw new Error(INSTALL);
};

/** The command's own words on real-time scheduling: granted with its I/O threads, or refused (a machine without the right). */
function realtimeSaid(r: PortRun, cmd: string): void {
  expect(r.stderr).toMatch(
    new RegExp(
      `twolink ${cmd}: (real-time scheduling: SCHED_FIFO 40 granted to the thread that drives the arm \\(39 to \\d+ of its \\d+ I/O and helper threads\\)|WARNING: no real-time priority)`,
    ),
  );
}

/**
 * The command on a fresh firmware rig; a run that failed while the simulated board starved (it fell
 * behind the wall clock by more than RIG_STARVED_MS, by the rig's own end report: the test rig's fault,
 * a real board never starves) is said and run again, RIG_STARVED_ATTEMPTS times in all; a failure with
 * the board keeping time fails the test, and a board that starved on every attempt skips it, said
 * (tests/helpers/not-judged.ts: .ci/run prints it).
 */
async function onFirmware(ctx: TestContext, cmd: PortCommand): Promise<PortRun> {
  for (let k = 1; ; k++) {
    const r = await portRunOnFirmware(cmd);
    if (r.code === 0 || (r.rigBehindMs ?? 0) <= RIG_STARVED_MS) return r;
    if (k >= RIG_STARVED_ATTEMPTS)
      notJudged(
        ctx,
        `${cmd} --port: the simulated board starved on all ${RIG_STARVED_ATTEMPTS} attempts (the last ${r.rigBehindMs!.toFixed(0)} ms behind), so the host could not be judged (a real board does not starve); the last run failed: ${r.why}`,
      );
    console.warn(
      `${cmd} --port: the simulated board starved (${r.rigBehindMs!.toFixed(0)} ms behind) and the run failed (${r.why}): running again (attempt ${k + 1} of ${RIG_STARVED_ATTEMPTS})`,
    );
  }
}

describe('tune and identify --port on the firmware rig (simavr, real time)', () => {
  it('twolink tune --port completes: both joints tuned and validated, the tuned rig file written', async (ctx) => {
    needSimavr();
    const r = await onFirmware(ctx, 'tune');
    expect(r.code, r.why).toBe(0);
    realtimeSaid(r, 'tune');
    const last = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { joints: { joint: number }[]; out: string };
    expect(last.joints.map((j) => j.joint)).toEqual([1, 2]);
    expect(last.out).toBe(r.out);
    const tuned = JSON.parse(readFileSync(r.out, 'utf8')) as { control: { pid: { kp: number[] } } };
    expect(tuned.control.pid.kp.every((k) => Number.isFinite(k) && k > 0)).toBe(true);
    expect(r.stderr).not.toMatch(/watchdog stopped the motors|strayed/);
  });

  it('twolink identify --port completes: the excitation, the fit and both validation runs, the identified rig file written', async (ctx) => {
    needSimavr();
    const r = await onFirmware(ctx, 'identify');
    expect(r.code, r.why).toBe(0);
    realtimeSaid(r, 'identify');
    const id = JSON.parse(readFileSync(r.out, 'utf8')) as { arm: Record<string, number> };
    for (const k of ['m1', 'm2', 'I1', 'I2']) expect(id.arm[k]).toBeGreaterThan(0);
    expect(r.stderr).not.toMatch(/fault:|stopped early/);
  });
});
