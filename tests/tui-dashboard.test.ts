// The dashboard drawn on a fake terminal (a blessed screen on stand-in streams): what is on the
// screen, what the keys send to the loop, and what happens on resize, at the end of the run and on
// the way out.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinNames, builtinPath, type PathSpec } from '../src/model/builtins.js';
import { Dashboard, recordingName, startDashboard } from '../src/tui/dashboard.js';
import { FakeSession, fakeTerminal, makeRow, type FakeTerminal } from './tui-fake-terminal.js';

const rig = loadRig('rigs/mock-arm.json');
const paths = builtinNames(rig.arm).map<PathSpec>((n) => builtinPath(rig.arm, n)!);

const open: Dashboard[] = [];
afterEach(() => {
  for (const d of open.splice(0)) d.stop();
});

function setup(cols = 120, rows = 40, opts: { unicode?: boolean; onFailure?: (e: unknown) => void } = {}) {
  const term = fakeTerminal(cols, rows, { unicode: opts.unicode ?? true });
  const session = new FakeSession();
  const onQuit = vi.fn();
  const dash = new Dashboard({
    screen: term.screen,
    session,
    rig,
    paths,
    demo: true,
    onQuit,
    now: () => new Date(2025, 2, 7, 9, 5, 3),
    recordDir: '/tmp',
    ...(opts.onFailure ? { onFailure: opts.onFailure } : {}),
  });
  open.push(dash);
  return { term, session, onQuit, dash };
}

const screenText = (term: FakeTerminal): string => term.text().join('\n');

const TRACKING = makeRow({
  t: 4.2,
  i: 2100,
  state: 'track',
  qDesDeg: [30, 45],
  qDeg: [29.5, 44.25],
  twinDeg: [29.75, 44.5],
  qdDesDeg: [60, -30],
  qdDeg: [58.5, -31],
  resDeg: [-0.25, -0.25],
  tauFf: [1.234, 0.321],
  tauPid: [0.05, -0.02],
  tauCmd: [1.284, 0.301],
  duty: [0.42, 0.13],
  overruns: 3,
  link: [2100, 2098, 2, 0],
});

describe('the dashboard on a 120 x 40 terminal', () => {
  it('shows per-joint desired / measured / twin values, torques, duty, error and residual', () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    const s = screenText(term);
    expect(s).toContain('joint 1');
    expect(s).toContain('joint 2');
    expect(s).toMatch(/angle \[deg\]\s+des\s+30\.00\s+45\.00/);
    expect(s).toMatch(/meas\s+29\.50\s+44\.25/);
    expect(s).toMatch(/twin\s+29\.75\s+44\.50/);
    expect(s).toMatch(/speed \[deg\/s\]\s+des\s+60\.0\s+-30\.0/);
    expect(s).toMatch(/ff\s+1\.234\s+0\.321/);
    expect(s).toMatch(/total\s+1\.284\s+0\.301/);
    expect(s).toMatch(/motor duty \[%\]\s+42\.0\s+13\.0/);
    expect(s).toMatch(/error \[deg\]\s+track\s+0\.500\s+0\.750/);
    expect(s).toMatch(/residual \[deg\] twin\s+-0\.25\s+-0\.25\s+ok \(< 2 deg\)/);
    // the state, the loop and the link
    expect(term.text()[0]).toContain('TRACK');
    expect(s).toContain('late 3');
    expect(s).toMatch(/p50 7 p99 950 max 1800/);
    expect(s).toMatch(/link sent 2100 recv 2098 lost 2 corrupt 0/);
    // the panels and the help line
    for (const title of ['joints', 'loop', 'arm', 'angle [deg]', 'tracking error [deg]', 'torque [N m]']) expect(s).toContain(title);
    expect(term.text()[39]).toMatch(
      /space start\/pause\s+e\/Esc E-STOP\s+d disable\/enable\s+n next trajectory\s+r record\s+z zero encoders\s+q quit/,
    );
  });

  it('draws the arm and the charts with braille dots, or ASCII on a terminal without UTF-8', () => {
    for (const unicode of [true, false]) {
      const { term, session, dash } = setup(120, 40, { unicode });
      for (let k = 0; k < 30; k++) {
        session.row = makeRow({
          t: 1 + k * 0.04,
          i: 500 + 20 * k,
          qDesDeg: [k - 10, 90 - k],
          qDeg: [k, 90 - k],
          twinDeg: [k + 10, 80 - k],
          tauCmd: [Math.sin(k / 3), 0.2],
        });
        dash.frame();
      }
      const rows = term.text();
      const armRows = rows
        .slice(3, 24)
        .map((r) => r.slice(65, 119))
        .join('');
      const chartRows = rows.slice(25, 38).join('');
      if (unicode) {
        expect(armRows).toMatch(/[\u2801-\u28ff]/);
        expect(chartRows).toMatch(/[\u2801-\u28ff]/);
      } else {
        // (blessed keeps borders as box characters and sends them as the terminal's line-drawing set)
        // eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included, is the point
        expect(rows.join('').replace(/[\u2500-\u257f]/g, '')).not.toMatch(/[^\x00-\x7f]/);
        expect(armRows).toMatch(/[.':]/);
      }
      expect(rows.join('\n')).toMatch(/x 0\.\d{3} y 0\.\d{3} m/);
      // the measured arm in white, the twin in cyan, the desired pose in yellow; joint 1 green and
      // joint 2 magenta in the charts
      const arm = term.colours([3, 24], [65, 119]);
      expect([...arm]).toEqual(expect.arrayContaining([7, 6, 3]));
      const charts = term.colours([25, 38], [0, 120]);
      expect(charts.has(2)).toBe(true);
      expect(charts.has(5)).toBe(true);
      dash.stop();
    }
  });

  it('shows the twin alarm per joint and on the notice line', () => {
    const { term, session, dash } = setup();
    session.row = makeRow({ state: 'track', resDeg: [0.3, 2.6], alarm: 0b10 });
    dash.frame();
    const s = screenText(term);
    expect(s).toContain('ALARM j2');
    expect(term.text()[1]).toContain('TWIN ALARM: joint 2 diverges from the model');
  });

  it("shows the trajectory's name, phase and progress from the loop's events", () => {
    const { term, session, dash } = setup();
    session.emit({
      kind: 'trajectory',
      name: 'reach',
      phase: 'approach',
      plan: {
        fromS: 0,
        toS: 1,
        path: [
          [0.3, 0.1],
          [0.3, 0.2],
        ],
      },
      t: 1.0,
    });
    session.row = makeRow({ t: 1.5, state: 'track', trajT: 0.5 });
    dash.frame();
    expect(term.text()[0]).toMatch(/reach 1\/3 approach 0\.50 s/);
    session.emit({
      kind: 'trajectory',
      name: 'reach',
      phase: 'track',
      plan: {
        fromS: 1,
        toS: 2.3,
        path: [
          [0.3, 0.2],
          [0.2, 0.3],
        ],
      },
      t: 2.0,
    });
    session.row = makeRow({ t: 2.5, i: 1250, state: 'track', trajT: 1.5 });
    dash.frame();
    // the reach proper lasts 1.3 s (1 s line + 0.3 s hold); 0.5 s into it
    expect(term.text()[0]).toMatch(/reach 1\/3 track 0\.50\/1\.30 s/);
    expect(screenText(term)).toContain('[2.00 s] reach: track');
  });

  it("draws the phase's planned path that the loop's event carries", () => {
    const { term, session, dash } = setup();
    const R = rig.arm.L1 + ('L2' in rig.arm ? rig.arm.L2 : 0);
    const line = (y: number): [number, number][] => Array.from({ length: 41 }, (_, k) => [(-0.6 + (1.2 * k) / 40) * R, y * R]);
    // The rows of the drawing with anything on them, above and below the mount (the middle row).
    const marked = (): { above: boolean; below: boolean } => {
      const rows = term
        .text()
        .slice(4, 23)
        .map((r) => r.slice(66, 118));
      const mid = Math.floor(rows.length / 2);
      const has = (rs: string[]): boolean => rs.some((r) => /[^\s\u2800]/.test(r.replace(/x -?\d.*$/, '')));
      return { above: has(rows.slice(0, mid - 2)), below: has(rows.slice(mid + 2)) };
    };
    dash.frame();
    expect(marked()).toEqual({ above: false, below: false });
    session.emit({ kind: 'trajectory', name: 'reach', phase: 'approach', plan: { fromS: 0, toS: 1, path: line(-0.6) }, t: 1 });
    dash.frame();
    expect(marked()).toEqual({ above: false, below: true });
    session.emit({ kind: 'trajectory', name: 'reach', phase: 'track', plan: { fromS: 1, toS: 2, path: line(0.6) }, t: 2 });
    dash.frame();
    expect(marked()).toEqual({ above: true, below: false });
  });
});

describe('keys', () => {
  it('e sends the e-stop at once, before anything is drawn; so does Esc', () => {
    const { term, session } = setup();
    session.row = TRACKING;
    term.type('e');
    // synchronously, from the input event itself
    expect(session.sent).toEqual([{ kind: 'estop', reason: { kind: 'estop', by: 'key' } }]);
    term.type('\x1b');
    expect(session.sent.length).toBe(2);
    expect(session.sent[1]).toMatchObject({ kind: 'estop' });
    // arrow keys and terminal replies are not the Esc key
    term.type('\x1b[A');
    term.type('\x1b[12;1R');
    expect(session.sent.length).toBe(2);
  });

  it('the screen says E-STOPPED once the loop has stopped, and waits for q before the run ends', async () => {
    const { term, session, dash, onQuit } = setup();
    session.row = TRACKING;
    dash.frame();
    term.type('e');
    session.row = makeRow({ t: 4.3, i: 2150, state: 'estop' });
    let ended = false;
    const finished = session.finish({ kind: 'estop', by: 'key' }).then(() => (ended = true));
    dash.frame();
    expect(term.text()[0]).toContain('E-STOPPED');
    expect(term.text()[1]).toContain('E-STOPPED: motors off (estop:key). The run is over: q to exit.');
    await new Promise((r) => setTimeout(r, 20));
    expect(ended).toBe(false);
    term.type('q');
    await finished;
    expect(ended).toBe(true);
    // the arm was already stopped: q only closed the screen
    expect(onQuit).not.toHaveBeenCalled();
  });

  it('at the end of the run it names the answer delay the loop learned (behind a 16U2 at 1 kHz: 4 samples)', async () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    session.row = makeRow({ t: 4.3, i: 2150, state: 'stopped' });
    void session.finish({ kind: 'done' }, 4);
    await new Promise((r) => setTimeout(r, 0));
    dash.frame();
    expect(screenText(term)).toMatch(/the run is over \(done; answers applied 4 sample\(s\) late, learned\)/);
    term.type('q');
  });

  it('q asks for a normal quit (stop reason "quit"), Ctrl-C for an interruption; a second press is the CLI\'s e-stop', async () => {
    const { term, session, dash, onQuit } = setup();
    session.row = TRACKING;
    term.type('q');
    expect(onQuit).toHaveBeenCalledTimes(1);
    expect(onQuit).toHaveBeenLastCalledWith({ kind: 'quit' });
    await new Promise((r) => setImmediate(r));
    dash.frame();
    expect(term.text()[1]).toContain('stopping softly: q again to e-stop');
    term.type('\x03');
    expect(onQuit).toHaveBeenCalledTimes(2);
    expect(onQuit).toHaveBeenLastCalledWith({ kind: 'interrupted', signal: 'SIGINT' });
    // a quit that ends the run does not wait for another key
    await session.finish({ kind: 'quit' });
  });

  it('after a fault the key bar says that only q works now', async () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    expect(term.text()[39]).toContain('space start/pause');
    session.row = makeRow({ t: 4.3, i: 2150, state: 'fault' });
    const finished = session.finish({ kind: 'fault', fault: { kind: 'link-lost', ms: 50, samples: 25 } });
    dash.frame();
    const bar = term.text()[39]!;
    expect(bar).toMatch(/^ q quit \(the run is over: the other keys do nothing now\)\s*$/);
    expect(term.text()[1]).toContain('FAULT: motors off (fault:link-lost');
    term.type('q');
    await finished;
  });

  it('after a cable fault with --reconnect, the wait and its countdown show beside the fault (they were hidden by it: seen in tmux)', () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    // The loop stopped on fault:cable; the session has not finished: it waits for the board.
    session.row = makeRow({ t: 4.3, i: 2150, state: 'fault' });
    dash.say('waiting for the board (the port /tmp/arm): 27 s left; Ctrl-C stops', 'warn');
    dash.frame();
    const notice = term.text().slice(1, 4).join(' ');
    expect(notice).toContain('FAULT: motors off.');
    expect(notice).toContain('waiting for the board (the port /tmp/arm): 27 s left; Ctrl-C stops');
    // The next tick of the countdown replaces it.
    dash.say('waiting for the board (the port /tmp/arm): 26 s left; Ctrl-C stops', 'warn');
    dash.frame();
    expect(term.text().slice(1, 4).join(' ')).toContain('26 s left');
  });

  for (const [cols, rows] of [
    [80, 24],
    [160, 48],
  ] as const) {
    it(`a 300-character fault is shown whole on a ${cols}-column screen: the notice wraps onto the rows it needs, the panels move down (issue 35)`, async () => {
      const { term, session, dash } = setup(cols, rows);
      session.row = TRACKING;
      dash.frame();
      const words = Array.from({ length: 60 }, (_, i) => `w${String(i).padStart(3, '0')}`).join(' '); // 60 x 5 - 1 = 299 characters, then the full stop
      const message = `${words}.`;
      expect(message).toHaveLength(300);
      session.row = makeRow({ t: 4.3, i: 2150, state: 'fault' });
      const finished = session.finish({ kind: 'fault', fault: { kind: 'internal', where: 'the test', message } });
      dash.frame();
      const text = term.text();
      // The notice's rows, up to the joints panel's top border.
      const end = text.findIndex((l, i) => i > 1 && /^┌|^\+-/.test(l));
      expect(end).toBeGreaterThan(2); // more than one row
      const notice = text.slice(1, end).join(' ').replace(/\s+/g, ' ');
      expect(notice).toContain('FAULT: motors off');
      for (const w of message.split(' ')) expect(notice).toContain(w);
      expect(notice.replace(/ /g, '')).toContain(message.replace(/ /g, ''));
      // the key bar is still the last row, and the joints panel still there below the notice
      expect(text[rows - 1]).toMatch(/^ q quit/);
      expect(text[end]).toContain('joints');
      term.type('q');
      await finished;
    });
  }

  it('the loop panel shows a long overruns count whole, however many digits the period figures have', () => {
    const { term, session, dash } = setup();
    session.row = makeRow({ t: 4.2, i: 2100, state: 'track', overruns: 616, errUs: 12345, link: [1_234_567, 1_234_560, 7, 0] });
    (session.stats.period as { max: number }).max = 1_234_567;
    dash.frame();
    dash.frame();
    expect(screenText(term)).toMatch(/late 616\b/);
  });

  it('space pauses and resumes, d disables and enables, n skips, z zeroes only while disabled', () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    term.type(' ');
    expect(session.sent.at(-1)).toEqual({ kind: 'pause' });
    session.row = makeRow({ state: 'paused', i: 501 });
    dash.frame();
    term.type(' ');
    expect(session.sent.at(-1)).toEqual({ kind: 'resume' });
    session.row = TRACKING;
    dash.frame();
    term.type('n');
    expect(session.sent.at(-1)).toEqual({ kind: 'next' });
    const before = session.sent.length;
    term.type('z');
    expect(session.sent.length).toBe(before);
    dash.frame();
    expect(term.text()[1]).toContain('zero: only while the motors are disabled or the loop is idle (d to disable)');
    term.type('d');
    expect(session.sent.at(-1)).toEqual({ kind: 'disable' });
    session.row = makeRow({ state: 'disabled', i: 502 });
    dash.frame();
    term.type('z');
    expect(session.sent.at(-1)).toEqual({ kind: 'zero' });
    term.type('d');
    expect(session.sent.at(-1)).toEqual({ kind: 'enable' });
  });

  it('r starts a recording named run-YYYYMMDD-HHMMSS.ndjson and stops it', () => {
    expect(recordingName(new Date(2025, 2, 7, 9, 5, 3))).toBe('run-20250307-090503.ndjson');
    const { term, session, dash } = setup();
    session.row = TRACKING;
    term.type('r');
    expect(session.recordings).toEqual(['/tmp/run-20250307-090503.ndjson']);
    dash.frame();
    expect(screenText(term)).toContain('rec /tmp/run-20250307-090503.ndjson');
    term.type('r');
    expect(session.recording).toBeUndefined();
    dash.frame();
    expect(screenText(term)).toContain('rec off (r to record)');
  });
});

describe('resize, small terminals and the way out', () => {
  it('survives resizes down to one cell, hiding panels, and keeps the state and the e-stop key visible', () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    const sizes: [number, number][] = [
      [80, 24],
      [60, 20],
      [40, 10],
      [30, 6],
      [20, 3],
      [10, 2],
      [1, 1],
      [200, 60],
      [120, 40],
    ];
    for (const [c, r] of sizes) {
      expect(() => {
        term.resize(c, r);
        dash.frame();
      }).not.toThrow();
      const rows = term.text();
      expect(rows.length).toBe(r);
      if (c >= 10) expect(rows[0]).toContain('TRACK'.slice(0, c - 1));
      if (r >= 2 && c >= 16) expect(rows[r - 1]).toContain('E-STOP');
    }
    term.resize(40, 10);
    dash.frame();
    expect(dash.currentLayout.charts.length).toBe(0);
    expect(dash.currentLayout.arm).toBeUndefined();
    // keys still work on a tiny screen
    term.type('e');
    expect(session.sent.at(-1)).toMatchObject({ kind: 'estop' });
  });

  it('stop() gives the terminal back (normal screen, cursor) and is idempotent', async () => {
    const { term, session, dash } = setup();
    session.row = TRACKING;
    dash.frame();
    await new Promise((r) => setImmediate(r));
    expect(term.written()).toContain('\x1b[?1049h');
    dash.stop();
    dash.stop();
    const out = term.written();
    expect(out.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(out.lastIndexOf('\x1b[?1049h'));
    expect(out.lastIndexOf('\x1b[?25h')).toBeGreaterThan(out.lastIndexOf('\x1b[?25l'));
    // keys after stop() go nowhere
    term.type('e');
    expect(session.sent).toEqual([]);
    expect(session.listeners.length).toBe(0);
  });

  it('an exception while drawing goes to onFailure', () => {
    const failures: unknown[] = [];
    const { session, dash } = setup(120, 40, { onFailure: (e) => failures.push(e) });
    session.latest = () => {
      throw new Error('boom');
    };
    dash.frame();
    expect(failures.length).toBe(1);
    expect((failures[0] as Error).message).toBe('boom');
  });

  it('startDashboard: a failure restores the terminal, says why and stops the arm through onQuit', async () => {
    const term = fakeTerminal(120, 40);
    term.screen.destroy(); // startDashboard makes its own screen on these streams
    const session = new FakeSession();
    session.latest = () => {
      throw new Error('drawing failed');
    };
    const onQuit = vi.fn();
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const d = startDashboard({ session, rig, paths, demo: true, onQuit, input: term.input, output: term.output });
      expect(onQuit).toHaveBeenCalledTimes(1);
      expect(onQuit).toHaveBeenLastCalledWith({
        kind: 'fault',
        fault: { kind: 'internal', where: 'the main thread (the dashboard)', message: 'drawing failed' },
      });
      expect(String(stderr.mock.calls.map((c) => c[0]).join(''))).toContain(
        'the dashboard failed, stopping the arm: Error: drawing failed',
      );
      const out = term.written();
      expect(out.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(out.lastIndexOf('\x1b[?1049h'));
      d.stop();
      d.stop();
      expect(process.listeners('uncaughtException').some((l) => l.name === 'fail')).toBe(false);
    } finally {
      stderr.mockRestore();
    }
  });
});

describe("the top line's link description", () => {
  // What `twolink run` on a pty rig at 1 Mbaud says (src/run/target.ts), as long as they come.
  const LONG = 'line protocol to the mock rig /tmp/twolink-rig-a1b2c3/tty (its own thread, 16u2 adapter) at 1000000 baud';
  it.each([80, 100, 120, 160, 200])('at %i columns the baud rate is on the top line, whole, and the state and progress too', (cols) => {
    const { term, session, dash } = setup(cols, 40);
    session.describe = LONG;
    session.row = TRACKING;
    session.emit({
      kind: 'trajectory',
      name: 'reach',
      phase: 'track',
      plan: {
        fromS: 1,
        toS: 2.3,
        path: [
          [0.3, 0.2],
          [0.2, 0.3],
        ],
      },
      t: 2.0,
    });
    dash.frame();
    const top = term.text()[0]!;
    expect(top).toMatch(/ TRACK /);
    expect(top).toMatch(/reach 1\/\d track/);
    expect(top).toMatch(/at 1000000 baud/);
    // Whole (wide enough), or cut in its middle or at its start, never at its end.
    if (cols >= 200) expect(top).toContain(LONG);
    else expect(top).toMatch(/│ (line protocol to [^│…]*)?…[^│…]*at 1000000 baud *$/);
  });
});
