// SIGUSR1 pauses a run's trajectory and a second SIGUSR1 resumes it (twolink run and replay), on
// the mock in real time. Waits for the run's own event lines on stderr, never a wall-clock window.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { own } from '../helpers/owned-children.js';

describe('SIGUSR1 pauses and resumes', () => {
  it(
    'the circle pauses (the loop says paused), resumes and ends done',
    async () => {
      const child = spawn(
        process.execPath,
        ['--single-threaded-gc', BIN, 'run', '--rig', 'rigs/mock-arm-identified.json', '--mock', '--traj', 'circle', '--headless'],
        { cwd: ROOT },
      );
      own(child);
      let stderr = '';
      let stdout = '';
      let step = 0;
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // track -> pause; paused -> resume
        if (step === 0 && /circle: track/.test(stderr)) {
          step = 1;
          child.kill('SIGUSR1');
        } else if (step === 1 && /\] paused/.test(stderr)) {
          step = 2;
          child.kill('SIGUSR1');
        }
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).toMatch(/SIGUSR1: paused \(again to resume\)/);
      expect(stderr).toMatch(/SIGUSR1: resumed/);
      expect(stderr).toMatch(/\] paused/);
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^stop: done/m);
    },
    hangGuardMs(30_000),
  );
});
