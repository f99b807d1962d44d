// `twolink teach --mock --hand line` on a real terminal (issue 35: with the scripted hand, w marked no
// waypoint, e did not e-stop, and the keys echoed into the output and stayed on the shell's command
// line). tmux runs it; the test types with send-keys and reads the screen with capture-pane; it waits
// for what the screen says, never for a time.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('teach with the scripted hand on a terminal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-teach-keys-'));
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'w marks a waypoint and e e-stops; no key echoes, and the terminal is given back as it was',
    async () => {
      expect(spawnSync('tmux', ['-V']).status, 'tmux is not installed (.ci/run installs it)').toBe(0);
      const f = (x: string) => join(dir, x);
      const out = f('taught.json');
      const script = `stty -g > ${f('before')}; node ${BIN} teach --rig ${ROOT}rigs/mock-arm-identified.json --mock --hand line --out ${out} --max-seconds 60; echo $? > ${f('code')}; stty -g > ${f('after')}; echo TWOLINK-EXITED; sleep 120`;
      tmux('new-session', '-d', '-s', 'teach', '-x', '160', '-y', '40', '-e', 'LANG=C.UTF-8', '-c', dir, 'sh', '-c', script);
      const screen = () => tmux('capture-pane', '-p', '-t', 'teach');
      const until = async (what: string, ok: () => boolean, orEnded = true): Promise<void> => {
        // a hang guard only: the test's own timeout ends a wait that never comes
        while (!ok()) {
          if (orEnded && existsSync(f('code')))
            throw new Error(`teach ended (exit ${readFileSync(f('code'), 'utf8').trim()}) before ${what}; the screen:\n${screen()}`);
          await sleep(200);
        }
      };
      await until('teach connected', () => /connected: /.test(screen()));
      tmux('send-keys', '-t', 'teach', 'w'); // before the hand starts recording: refused, said
      await until('the refusal said', () => /no waypoint: a waypoint marks a point of the motion being recorded/.test(screen()));
      await until('the hand recording', () => /^recording$/m.test(screen()));
      tmux('send-keys', '-t', 'teach', 'w');
      await until('the waypoint said', () => /waypoint 1/.test(screen()));
      tmux('send-keys', '-t', 'teach', 'e');
      await until('teach ended', () => existsSync(f('code')) && /TWOLINK-EXITED/.test(screen()), false);
      const s = screen();
      expect(readFileSync(f('code'), 'utf8').trim()).toBe('1'); // an e-stop ends teach with 1 (what was recorded is still written)
      expect(s).toMatch(/e-stop: the motors are off/);
      expect(s).not.toMatch(/e-stop[\s\S]*\nrecording\n/); // the hand does not start recording again after it
      // No key echoed: no screen line is only a typed key, and none carries one after the text.
      for (const line of s.split('\n')) expect(line.trim(), s).not.toMatch(/^\^?[we]$/);
      expect(readFileSync(f('after'), 'utf8')).toBe(readFileSync(f('before'), 'utf8'));
    },
    hangGuardMs(120_000),
  );
});
