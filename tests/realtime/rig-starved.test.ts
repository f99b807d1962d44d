// A pty rig whose board does not run for a while (the rig process stopped with SIGSTOP, as a busy
// machine would starve it) while a host runs on it says so on its stderr, with how long: a host's stop
// then is the rig's fault.
// The stop lasts at least 300 ms; the test waits for the rig's line (an event), not for a time window.
// Its injections (--inject) land on its simulated arm's time, not the wall's: a rig stopped across an
// injection's time applies it when its arm reaches that time (its --report says both times). Their times
// count from the host's handshake (tests/realtime/rig-inject-handshake.test.ts): here the test's own.
import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFailed } from 'vitest';
import { createInterface } from 'node:readline';
import { loadRig } from '../../src/config/load.js';
import { parseMockReport, type MockReport } from '../../src/mock/mock-report.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { closePort, sendHandshake } from '../helpers/pty-handshake.js';
import { own } from '../helpers/owned-children.js';

/** The first match of `re` in what `get` returns as `stream` brings more; fails with the text so far if the stream ends first (its process died). */
function waitFor(get: () => string, stream: NodeJS.ReadableStream, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      stream.off('data', look);
      stream.off('end', ended);
    };
    const look = (): void => {
      const m = re.exec(get());
      if (m) {
        done();
        resolve(m);
      }
    };
    const ended = (): void => {
      done();
      reject(new Error(`the stream ended before ${re}; it said:\n${get()}`));
    };
    stream.on('data', look);
    stream.once('end', ended);
    look();
  });
}

describe('a starved pty rig says so', () => {
  for (const rigFile of ['rigs/mock-arm.json', 'rigs/mock-arm-firmata.json']) {
    it(`${rigFile}: stopped for 300 ms, the rig says its board starved for about that long`, async () => {
      const rig = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', rigFile, '--pty'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      own(rig);
      let err = '';
      rig.stderr.on('data', (d: Buffer) => (err += d.toString()));
      let out = '';
      rig.stdout.on('data', (d: Buffer) => (out += d.toString()));
      let host: ReturnType<typeof spawn> | undefined;
      let hostErr = '';
      let step = 'waiting for the rig to serve';
      onTestFailed(() =>
        console.error(
          `rig-starved, ${rigFile}: failed while ${step}\n--- the rig's stderr:\n${err}\n--- the host's stderr:\n${hostErr}\n--- host exit: ${host?.exitCode ?? 'running'} ${host?.signalCode ?? ''}`,
        ),
      );
      try {
        await waitFor(() => err, rig.stderr, /serving on/);
        const path = (await waitFor(() => out, rig.stdout, /^(\S+)\n/))[1]!;
        // a host, so that the board samples (an idle board has no timers to be late)
        host = spawn(
          process.execPath,
          ['--single-threaded-gc', BIN, 'run', '--rig', rigFile, '--port', path, '--traj', 'reach', '--headless'],
          { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        own(host);
        host.stderr!.on('data', (d: Buffer) => (hostErr += d.toString()));
        step = "waiting for the host's tracking";
        host.stdout!.resume();
        // The loop past its approach, which it ends on the board's samples: the board samples every few ms
        // (a board with no timer due is not starved). Not the approach's start: the loop says it at its
        // tick 0, maybe before the board has its command to stream (seen: the rig stopped then had no
        // timer due, said nothing, and the test waited for ever).
        await waitFor(() => hostErr, host.stderr!, /\] reach: track/);
        rig.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, 300)); // how long the board is held, not a window for a result
        const from = err.length;
        rig.kill('SIGCONT');
        step = "waiting for the rig's starved line";
        // the first line after the stop that says so (earlier ones: the machine was busy at start-up)
        const m = await waitFor(
          () => err.slice(from),
          rig.stderr,
          /the simulated board starved for ([\d.]+) ms at [\d.]+ s \(a busy machine did not run it\): a stop of the host's run now is the test rig's fault, not the host's/,
        );
        expect(Number(m[1])).toBeGreaterThanOrEqual(250);
      } finally {
        host?.kill('SIGKILL');
        rig.kill('SIGCONT');
        rig.kill('SIGTERM');
        await new Promise((r) => (rig.exitCode !== null ? r(undefined) : rig.once('exit', r)));
      }
    });
  }
});

describe("a starved pty rig's injections land on its arm's time, not the wall's", () => {
  for (const rigFile of ['rigs/mock-arm.json', 'rigs/mock-arm-firmata.json']) {
    it(`${rigFile}: stopped from the host's handshake for 5 s, stall=2@3 jams the arm within one plant step of the arm's 3 s, the wall's being 1 s or more ahead`, async () => {
      const step = loadRig(rigFile).plant!.step;
      const rig = spawn(
        process.execPath,
        [
          '--single-threaded-gc',
          BIN,
          'rig',
          '--rig',
          rigFile,
          '--pty',
          '--report',
          '--no-rt',
          '--inject',
          'stall=2@3',
          '--inject',
          'reset@3.5',
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      own(rig);
      let err = '';
      rig.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const injected: Extract<MockReport, { kind: 'injected' }>[] = [];
      let stoppedAt: number | undefined;
      let port: Awaited<ReturnType<typeof sendHandshake>> | undefined;
      try {
        await new Promise<void>((resolve, reject) => {
          rig.once('exit', (code) => reject(new Error(`twolink rig exited (${code}): ${err}`)));
          let host = '';
          createInterface({ input: rig.stdout }).on('line', (line) => {
            const r = parseMockReport(line);
            if (r.kind === 'pty') host = r.host;
            else if (r.kind === 'serving') void sendHandshake(host, rigFile).then((p) => (port = p), reject);
            else if (r.kind === 'handshake') {
              // Held from the handshake (its injections' zero) past their times: a wall-timed injection
              // would land when the rig runs again, at the arm's time it stood still at.
              rig.kill('SIGSTOP');
              stoppedAt = injected.length;
              setTimeout(() => rig.kill('SIGCONT'), 5000); // how long the rig is held, not a window for a result
            } else if (r.kind === 'injected') {
              injected.push(r);
              if (injected.length === 2) resolve();
            }
          });
        });
        expect(stoppedAt, 'the rig applied an injection before it was stopped').toBe(0);
        expect(injected.map((r) => [r.injection, r.at])).toEqual([
          ['stall=2@3', 3],
          ['reset@3.5', 3.5],
        ]);
        const [stall, reset] = injected as [(typeof injected)[0], (typeof injected)[0]];
        // On the arm, polled at each plant step: within one of its time.
        expect(stall.plantS).toBeGreaterThanOrEqual(3 - 1e-9);
        expect(stall.plantS).toBeLessThanOrEqual(3 + step + 1e-9);
        // The board's reset on the board's time: not before it.
        expect(reset.plantS).toBeGreaterThanOrEqual(3.5 - 1e-9);
        // The rig was held across both times: the wall's time ran on (at least 5 s of it) while the arm's stood at most at 3.
        expect(stall.wallS - stall.plantS).toBeGreaterThanOrEqual(1);
        expect(err).toMatch(
          /twolink rig: injected stall=2@3 at the arm's time 3\.\d{4} s from the host's handshake \(the wall's \d+\.\d{4} s\)/,
        );
      } finally {
        await closePort(port);
        rig.kill('SIGCONT');
        rig.kill('SIGTERM');
        await new Promise((r) => (rig.exitCode !== null ? r(undefined) : rig.once('exit', r)));
      }
    });
  }
});
