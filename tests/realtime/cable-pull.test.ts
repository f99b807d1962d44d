// A cable pulled mid-reach (issue 34 item 4, its safety part): the pty rig behind a stable path (a
// symlink, as a udev /dev/serial/by-id name is), killed while the arm tracks; the line-protocol rig and the Firmata one. The run must end with
// fault:cable naming the port the user gave and the error, not link-lost or link-closed, and the
// motors' last command zero. The detection delay is measured in loop time (the loop's clock, from its
// last sample to the fault) and printed, never asserted: timing figures belong to `npm run bench`.
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';
import { startPtyRig } from '../helpers/pty-rig.js';

const dir = mkdtempSync(`${tmpdir()}/twolink-cable-`);

/** How often the recording is looked at while waiting for the reach's tracking [ms] (a poll, not a limit). */
const POLL_MS = 20;

/** Resolves once the recording holds a tick of the reach's tracking phase (the recording is written as the run goes). */
function untilTracking(file: string, limitMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => (clearInterval(look), reject(new Error(`${file}: no tracking tick within ${limitMs} ms`))), limitMs);
    const look = setInterval(() => {
      if (existsSync(file) && readFileSync(file, 'utf8').includes('"phase":"track"')) {
        clearInterval(look);
        clearTimeout(guard);
        resolve();
      }
    }, POLL_MS);
  });
}

describe.each([
  ['line protocol', 'rigs/mock-arm.json', 'watchdog', []],
  // The portable path: the port in a relay process (transport/relay-binding.ts), which classifies the error there.
  ['line protocol, serialport relay', 'rigs/mock-arm.json', 'watchdog', ['--serial', 'serialport']],
  // Stock Firmata has no watchdog: nobody cut the motors (the rig is gone with them here).
  ['Firmata', 'rigs/mock-arm-firmata.json', 'unconfirmed-no-watchdog', []],
])('a cable pulled mid-run (%s)', (protocol, rigFile, outcome, serial) => {
  it(
    'the pty rig killed mid-reach: fault:cable naming the port (the symlink given) and the errno, the motors last commanded zero',
    async () => {
      const rig = await startPtyRig(rigFile, ['--rt']);
      const port = `${dir}/board-${protocol.replace(/\W+/g, '-')}`;
      symlinkSync(rig.path, port);
      const rec = `${dir}/pulled-${protocol.replace(/\W+/g, '-')}.ndjson`;
      try {
        const run = twolink(['run', '--rig', rigFile, '--port', port, '--traj', 'reach', '--record', rec, '--json', ...serial], {
          timeoutMs: 30_000,
        });
        // The run may end before its tracking (a refused start): then say how it ended, not that no tick came.
        const tracking = untilTracking(rec, hangGuardMs(15_000));
        tracking.catch(() => undefined); // when the run ended first, its guard's rejection is not this test's
        const first = await Promise.race([tracking.then(() => 'tracking' as const), run.then(() => 'ended' as const)]);
        if (first === 'ended') throw new Error(`the run ended before its tracking phase: ${whyExit(await run)}`);
        // The cable pulled: the rig and its socat (tied to it) die at once, the pty's far end with them.
        rig.child.kill('SIGKILL');
        const r = await run;
        expect(r.code, whyExit(r)).toBe(1);
        const summary = lastJson(r);
        expect(summary.stop).toEqual({
          kind: 'fault',
          fault: { kind: 'cable', port, code: expect.stringMatching(/^(EIO|ENXIO|ENODEV)$/), message: expect.any(String) },
        });
        expect(summary.stopReason).toMatch(new RegExp(`^fault:cable: ${port.replace(/[/.]/g, '\\$&')} vanished \\(`));
        // Nobody confirmed the zero (the board is gone): its watchdog is what stops the motors, where it has one.
        expect(summary.stopOutcome).toBe(outcome);
        const rows = readFileSync(rec, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        const ticks = rows.filter((x) => x.kind === 'tick');
        expect(ticks.at(-1).state).toBe('fault');
        expect(ticks.at(-1).duty).toEqual([0, 0]);
        const lastSample = ticks.filter((x) => x.state !== 'fault').at(-1);
        const faulted = rows.find((x) => x.kind === 'event' && x.event === 'state' && x.state === 'fault');
        expect(faulted.stop.fault.kind).toBe('cable');
        // The figure: loop time [s] from the last sample answered to the fault (the pty's EIO reaching the loop).
        console.log(
          `cable pulled: fault:cable ${((faulted.t - lastSample.t) * 1000).toFixed(1)} ms after the last sample (loop time; ${protocol}, pty rig, ${rigFile})`,
        );
      } finally {
        // stop() waits for an exit: a rig already killed has had it.
        if (rig.child.exitCode === null && rig.child.signalCode === null) await rig.stop();
      }
    },
    hangGuardMs(60_000),
  );
});
