// A pty rig whose board does not run for a while (the rig process stopped with SIGSTOP, as a busy
// machine would starve it) while a host runs on it says so on its stderr, with how long: a host's stop
// then is the rig's fault.
// The stop lasts at least 300 ms; the test waits for the rig's line (an event), not for a time window.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';

function waitFor(get: () => string, stream: NodeJS.ReadableStream, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve) => {
    const look = (): void => {
      const m = re.exec(get());
      if (m) {
        stream.off('data', look);
        resolve(m);
      }
    };
    stream.on('data', look);
    look();
  });
}

describe('a starved pty rig says so', () => {
  for (const rigFile of ['rigs/mock-arm.json', 'rigs/mock-arm-firmata.json']) {
    it(`${rigFile}: stopped for 300 ms, the rig says its board starved for about that long`, async () => {
      const rig = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', rigFile, '--pty'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      rig.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      let out = '';
      rig.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      let host: ReturnType<typeof spawn> | undefined;
      try {
        await waitFor(() => err, rig.stderr!, /serving on/);
        const path = (await waitFor(() => out, rig.stdout!, /^(\S+)\n/))[1]!;
        // a host, so that the board samples (an idle board has no timers to be late)
        host = spawn(process.execPath, ['--single-threaded-gc', BIN, 'run', '--rig', rigFile, '--port', path, '--traj', 'reach', '--headless'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let hostErr = '';
        host.stderr!.on('data', (d: Buffer) => (hostErr += d.toString()));
        host.stdout!.resume();
        // the loop tracking: the board samples every few ms (a board with no timer due is not starved)
        await waitFor(() => hostErr, host.stderr!, /\] reach: approach/);
        rig.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, 300)); // how long the board is held, not a window for a result
        const from = err.length;
        rig.kill('SIGCONT');
        // the first line after the stop that says so (earlier ones: the machine was busy at start-up)
        const m = await waitFor(() => err.slice(from), rig.stderr!, /the simulated board starved for ([\d.]+) ms at [\d.]+ s \(a busy machine did not run it\): a stop of the host's run now is the test rig's fault, not the host's/);
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
