// `twolink demo` on a real terminal: tmux runs it in a 120 x 40 pane, the test types keys with
// send-keys and reads the screen with capture-pane. Timeouts are generous and nothing about timing is
// asserted (the machine is shared); only what the screen says, the exit code, and that the terminal is
// given back as it was (stty settings, normal screen, visible cursor).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { BIN, ROOT, twolink } from '../helpers/cli.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('twolink demo in tmux', () => {
  beforeAll(() => {
    if (!hasTmux) throw new Error('tmux is not installed: sudo apt-get install tmux (.ci/run installs it)');
  });
  const dir = mkdtempSync(join(tmpdir(), 'twolink-tui-'));
  // A server of the test's own, its socket in the test's directory (gone with it).
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  const sessions: string[] = [];
  // A session that stays, so that the server does not exit (and race the next new-session) when a
  // test's session ends.
  beforeAll(() => {
    tmux('new-session', '-d', '-s', 'keeper', 'sleep 3600');
  });
  afterEach(() => {
    for (const s of sessions.splice(0)) {
      try {
        tmux('kill-session', '-t', s);
      } catch {
        // ended by itself
      }
    }
  });

  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the demo in a new 120 x 40 session; the shell around it saves stty before and after. */
  function start(name: string, extra = ''): { screen: () => string; code: () => string | undefined; flags: () => string } {
    const f = (x: string) => join(dir, `${name}.${x}`);
    const script = `stty -g > ${f('before')}; node ${BIN} demo --rig ${ROOT}rigs/mock-arm.json ${extra}; echo $? > ${f('code')}; stty -g > ${f('after')}; echo TWOLINK-EXITED; sleep 120`;
    sessions.push(name);
    // in the test's directory, where r puts its recordings
    mkdirSync(join(dir, name));
    tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', '-e', 'LANG=C.UTF-8', '-c', join(dir, name), 'sh', '-c', script);
    return {
      screen: () => tmux('capture-pane', '-p', '-t', name),
      code: () => (existsSync(f('code')) ? readFileSync(f('code'), 'utf8').trim() : undefined),
      flags: () => tmux('display-message', '-p', '-t', name, '#{alternate_on} #{cursor_flag} #{mouse_any_flag}').trim(),
    };
  }

  async function until<T>(what: string, fn: () => T | undefined | false, screen: () => string, timeoutMs = 60_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const v = fn();
      if (v) return v;
      await sleep(250);
    }
    throw new Error(`timed out waiting for ${what}; the screen:\n${screen()}`);
  }

  /** The measured angle of joint 1 on the screen [deg]. */
  const angle = (s: string): number | undefined => {
    const m = /angle \[deg\][^\n]*\n[^\n]*?meas\s+(-?\d+\.\d+)/.exec(s);
    return m ? Number(m[1]) : undefined;
  };

  /** Waits until the dashboard is up and joint 1's angle changes from one screen to the next. */
  async function moving(d: ReturnType<typeof start>): Promise<void> {
    const first = await until(
      'the dashboard',
      () => angle(d.screen()) !== undefined && d.screen().includes('TRACK') && angle(d.screen()),
      d.screen,
    );
    await until('the arm to move', () => Math.abs((angle(d.screen()) ?? first) - first) > 0.5, d.screen);
  }

  function restored(d: ReturnType<typeof start>, name: string): void {
    expect(d.screen()).toContain('TWOLINK-EXITED');
    // normal screen, cursor visible, no mouse reporting; the tty settings as they were
    expect(d.flags()).toBe('0 1 0');
    expect(readFileSync(join(dir, `${name}.after`), 'utf8')).toBe(readFileSync(join(dir, `${name}.before`), 'utf8'));
  }

  it(
    'shows the arm moving; r records; e e-stops and the screen says so; q then quits and the terminal is restored',
    async () => {
      const d = start('estop');
      await moving(d);
      const s = d.screen();
      expect(s).toMatch(/joint 1\s+joint 2/);
      expect(s).toContain('e/Esc E-STOP');
      expect(s).toMatch(/[\u2801-\u28ff]/); // the drawing and the charts
      expect(s).toMatch(/\[\d+\.\d\d s\] (reach|point|circle): (approach|track|park)/); // the loop's events
      // r: a recording in the working directory, until r again
      tmux('send-keys', '-t', 'estop', 'r');
      await until('the recording', () => /rec run-\d{8}-\d{6}\.ndjson\s+[1-9]\d* ticks/.test(d.screen()), d.screen);
      await sleep(500);
      tmux('send-keys', '-t', 'estop', 'r');
      await until('the recording to stop', () => d.screen().includes('rec off (r to record)'), d.screen);
      const files = readdirSync(join(dir, 'estop')).filter((f) => /^run-\d{8}-\d{6}\.ndjson$/.test(f));
      expect(files.length).toBe(1);
      const lines = readFileSync(join(dir, 'estop', files[0]!), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines[0].kind).toBe('header');
      expect(lines.filter((l) => l.kind === 'tick').length).toBeGreaterThan(100);
      expect(lines.at(-1)).toMatchObject({
        kind: 'summary',
        stop: { kind: 'requested', text: 'recording stopped' },
        stopReason: 'recording stopped',
      });
      tmux('send-keys', '-t', 'estop', 'e');
      await until(
        'E-STOPPED on the screen',
        () =>
          /E-STOPPED: motors off \(estop:key(; answers applied \d+ sample\(s\) late, learned)?\)\. The run is over: q to exit\./.test(
            d.screen(),
          ),
        d.screen,
      );
      expect(d.screen().split('\n')[0]).toContain('E-STOPPED');
      // the key bar says that only q works now
      expect(d.screen()).toContain('q quit (the run is over: the other keys do nothing now)');
      expect(d.screen()).not.toContain('space start/pause');
      // it waits for q
      await sleep(1000);
      expect(d.code()).toBeUndefined();
      tmux('send-keys', '-t', 'estop', 'q');
      const code = await until('the demo to exit', () => d.code(), d.screen);
      expect(code).toBe('1');
      await until('the shell after the demo', () => d.screen().includes('TWOLINK-EXITED'), d.screen);
      expect(d.screen()).toMatch(/stop: estop:key \(zero command (acknowledged|watchdog)\)/);
      restored(d, 'estop');
    },
    hangGuardMs(180_000),
  );

  it(
    'q stops the arm softly and quits normally (stop reason quit, exit 0); the terminal is restored',
    async () => {
      const d = start('quit');
      await moving(d);
      tmux('send-keys', '-t', 'quit', 'q');
      const code = await until('the demo to exit', () => d.code(), d.screen);
      expect(code).toBe('0');
      await until('the shell after the demo', () => d.screen().includes('TWOLINK-EXITED'), d.screen);
      expect(d.screen()).toMatch(/stop: quit \(zero command (acknowledged|watchdog)\)/);
      restored(d, 'quit');
    },
    hangGuardMs(180_000),
  );

  it(
    'Ctrl-C on the dashboard is an interruption (exit 130)',
    async () => {
      const d = start('ctrlc');
      await moving(d);
      tmux('send-keys', '-t', 'ctrlc', 'C-c');
      const code = await until('the demo to exit', () => d.code(), d.screen);
      expect(code).toBe('130');
      await until('the shell after the demo', () => d.screen().includes('TWOLINK-EXITED'), d.screen);
      expect(d.screen()).toMatch(/stop: interrupted:SIGINT/);
      restored(d, 'ctrlc');
    },
    hangGuardMs(180_000),
  );

  it(
    'SIGTERM stops the arm softly; the terminal is restored',
    async () => {
      const d = start('term');
      await moving(d);
      const shell = tmux('display-message', '-p', '-t', 'term', '#{pane_pid}').trim();
      const node = execFileSync('ps', ['-o', 'pid=', '--ppid', shell], { encoding: 'utf8' }).trim().split(/\s+/)[0]!;
      process.kill(Number(node), 'SIGTERM');
      const code = await until('the demo to exit', () => d.code(), d.screen);
      expect(code).toBe('130');
      await until('the shell after the demo', () => d.screen().includes('TWOLINK-EXITED'), d.screen);
      expect(d.screen()).toMatch(/stop: interrupted:SIGTERM/);
      restored(d, 'term');
    },
    hangGuardMs(180_000),
  );

  it(
    'the terminal is closed under the dashboard (SIGHUP): the arm stops softly and the recording is complete',
    async () => {
      const file = join(dir, 'hup.ndjson');
      const d = start('hup', `--record ${file}`);
      await moving(d);
      tmux('kill-session', '-t', 'hup');
      sessions.splice(sessions.indexOf('hup'), 1);
      const lines = await until(
        'the recording to end with its summary',
        () => {
          if (!existsSync(file)) return undefined;
          const text = readFileSync(file, 'utf8');
          const all = text.trim().split('\n');
          return text.endsWith('\n') && JSON.parse(all.at(-1)!).kind === 'summary' ? all : undefined;
        },
        () => '(the session is gone)',
        30_000,
      );
      const parsed = lines.map((l) => JSON.parse(l));
      const summary = parsed.at(-1);
      expect(summary.stop).toEqual({ kind: 'interrupted', signal: 'SIGHUP' });
      expect(summary.stopOutcome).toBe('acknowledged');
      expect(parsed.filter((l) => l.kind === 'tick')).toHaveLength(summary.ticks);
    },
    hangGuardMs(90_000),
  );
});

describe('twolink demo without a terminal', () => {
  it(
    'prints its summary on stdout (the log on stderr) and exits 0',
    async () => {
      const r = await twolink(['demo', '--traj', 'point'], { timeoutMs: 90_000 });
      if (r.code !== 0) throw new Error(`twolink demo exited ${r.code}; its stderr:\n${r.stderr}`);
      expect(r.stdout).toMatch(/^stop: done \(zero command (acknowledged|watchdog)\)\n/);
      expect(r.stdout).toMatch(/tracking RMS \[deg\]: \d+\.\d{3}, \d+\.\d{3}/);
      expect(r.stderr).toMatch(/twolink demo: point on mock-arm/);
      expect(r.stderr).not.toMatch(/^stop:/m);
    },
    hangGuardMs(120_000),
  );
});
