// The dashboard's pure parts: the dot canvas, the e-stop key on raw terminal input, the layout on
// every terminal size, the help line, the loop panel's fitting of its lines.
import { describe, expect, it } from 'vitest';
import { DotCanvas } from '../src/tui/canvas.js';
import { History } from '../src/tui/history.js';
import { estopInInput, helpText } from '../src/tui/keys.js';
import { layout, type Rect } from '../src/tui/layout.js';
import { loopLines, UNICODE_GLYPHS, visibleLength, type PanelState } from '../src/tui/panels.js';
import type { TickObject } from '../src/telemetry/tick.js';

describe('DotCanvas', () => {
  it('maps dots to braille cells (Unicode dot numbering) and to ASCII', () => {
    const b = new DotCanvas(2, 1, 'braille');
    b.set(0, 0);
    b.set(1, 3);
    b.set(2, 1);
    expect(b.plainLines()).toEqual(['\u2881\u2802']);
    const a = new DotCanvas(2, 1, 'ascii');
    a.set(0, 0);
    a.set(0, 1);
    a.set(1, 1);
    expect(a.plainLines()).toEqual([':.']);
  });

  it('draws lines end to end, ignores dots off the canvas and non-finite ends', () => {
    const c = new DotCanvas(4, 2, 'ascii');
    c.line(0, 0, 3, 3);
    expect(c.plainLines()).toEqual(["'.  ", "  '."]);
    c.clear();
    c.line(-100, 1, 100, 1);
    expect(c.plainLines()).toEqual(['....', '    ']);
    c.clear();
    c.line(0, 0, NaN, 3);
    c.line(0, 0, 1e12, 1e12);
    expect(c.plainLines()[0]![0]).toBe("'");
  });

  it('colours cells with blessed tags, the last series drawn on top', () => {
    const c = new DotCanvas(3, 1, 'ascii');
    c.set(0, 0, 1);
    c.set(1, 0, 1);
    c.set(1, 1, 2);
    c.write(2, 0, 'x', 0);
    expect(c.taggedLines(['', 'green-fg', 'red-fg'])).toEqual(["{green-fg}'{/green-fg}{red-fg}:{/red-fg}x"]);
  });
});

describe('History', () => {
  it('keeps the newest samples in order and finds a time window', () => {
    const h = new History(4);
    const v = (x: number) => ({
      qDes0: x,
      qDes1: 0,
      q0: x,
      q1: 0,
      err0: 0,
      err1: 0,
      res0: 0,
      res1: 0,
      tau0: 0,
      tau1: 0,
      ff0: 0,
      ff1: 0,
      x: 0,
      y: 0,
    });
    for (let k = 0; k < 6; k++) h.push(k * 0.1, v(k));
    expect(h.length).toBe(4);
    expect([0, 1, 2, 3].map((i) => h.value(i, 'q0'))).toEqual([2, 3, 4, 5]);
    expect(h.since(0.35)).toBe(2);
    // a new run (time goes back) starts afresh
    h.push(0, v(9));
    expect(h.length).toBe(1);
  });
});

describe('the e-stop key on raw input', () => {
  it('is e, E, Alt+e, or Esc alone', () => {
    for (const s of ['e', 'E', 'xxe', '\x1be', '\x1b', '\x1b\x1b[A', ' e']) expect(estopInInput(s), JSON.stringify(s)).toBe(true);
  });
  it('is not a letter inside an escape sequence (keys, terminal replies)', () => {
    for (const s of [
      'q',
      ' ',
      '\x1b[A',
      '\x1b[1e',
      '\x1b[12;40R',
      '\x1bOE',
      '\x1b]11;rgb:eeee/eeee/eeee\x07',
      '\x1bP>|tmux\x1b\\',
      '\x03',
    ]) {
      expect(estopInInput(s), JSON.stringify(s)).toBe(false);
    }
  });
});

describe('layout', () => {
  const inside = (r: Rect, W: number, H: number): boolean =>
    r.left >= 0 && r.top >= 0 && r.width >= 1 && r.height >= 1 && r.left + r.width <= W && r.top + r.height <= H;
  const overlap = (a: Rect, b: Rect): boolean =>
    a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;

  it('puts every panel inside the terminal, without overlaps, for every size up to 200 x 70', () => {
    const problems: string[] = [];
    for (let W = 0; W <= 200; W += 3) {
      for (let H = 0; H <= 70; H++) {
        const L = layout(W, H);
        const rects = [L.header, L.message, L.help, L.joints, L.loop, L.arm, ...L.charts].filter((r): r is Rect => r !== undefined);
        for (const r of rects) if (!inside(r, W, H)) problems.push(`${W}x${H}: outside ${JSON.stringify(r)}`);
        for (let i = 0; i < rects.length; i++)
          for (let j = i + 1; j < rects.length; j++) if (overlap(rects[i]!, rects[j]!)) problems.push(`${W}x${H}: overlap`);
        if (W >= 1 && H >= 1 && !L.header) problems.push(`${W}x${H}: no header`);
        if (W >= 1 && H >= 2 && !L.help) problems.push(`${W}x${H}: no help line`);
        for (const c of L.charts) if (c.height < 7) problems.push(`${W}x${H}: chart of ${c.height} rows`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows everything on 120 x 40 and degrades on smaller terminals', () => {
    const full = layout(120, 40);
    expect(full.joints && full.loop && full.arm && full.message).toBeTruthy();
    expect(full.charts.length).toBe(3);
    const small = layout(80, 24);
    expect(small.joints).toBeDefined();
    expect(small.charts.length).toBe(0);
    const tiny = layout(20, 3);
    expect(tiny.joints).toBeUndefined();
    expect(tiny.header && tiny.help).toBeTruthy();
    expect(layout(NaN, -5)).toEqual({ cols: 0, rows: 0, charts: [] });
  });

  it('the help line fits the width, and always names the e-stop key', () => {
    for (const w of [16, 30, 60, 120]) {
      const h = helpText(w);
      expect(h.length).toBeLessThanOrEqual(w);
      expect(h).toContain('E-STOP');
    }
  });
});

describe('the help line once the run is over', () => {
  it('says that only q works, on every width', () => {
    for (const w of [8, 20, 40, 60, 120]) {
      const h = helpText(w, true);
      expect(h.length).toBeLessThanOrEqual(w);
      expect(h).toMatch(/^ q quit/);
      expect(h).not.toMatch(/E-STOP|pause|record/);
    }
    expect(helpText(120, true)).toBe(' q quit (the run is over: the other keys do nothing now)');
  });
});

describe('the loop panel', () => {
  const tick = (over: Partial<TickObject['timing']>, link: Partial<TickObject['link']> = {}): TickObject =>
    ({
      state: 'track',
      timing: { errUs: 3, execUs: 17, overruns: 0, missed: 0, ...over },
      link: { sent: 7208, received: 7208, lost: 0, corrupt: 0, ...link },
      flags: 1,
    }) as unknown as TickObject;
  const state = (t: TickObject, period = { p50Us: 3, p99Us: 781, maxUs: 1818 }): PanelState => ({
    title: 'twolink demo',
    rigName: 'mock-arm',
    describe: '',
    joints: 2,
    tick: t,
    alarmDeg: 2,
    rateHz: 500,
    measuredHz: 500,
    period,
    events: [],
    quitPresses: 0,
    waitingForQuit: false,
    glyphs: UNICODE_GLYPHS,
  });

  it('keeps every line within the width and the late-samples count whole, whatever the other figures', () => {
    const cases: [TickObject, { p50Us: number; p99Us: number; maxUs: number }][] = [
      [tick({ overruns: 616, errUs: 12345 }), { p50Us: 123, p99Us: 45678, maxUs: 1234567 }],
      [
        tick({ overruns: 1_000_001, errUs: -999999, execUs: 123456 }, { sent: 98_765_432, received: 98_765_000, lost: 432, corrupt: 17 }),
        { p50Us: 99999, p99Us: 999999, maxUs: 9999999 },
      ],
      [tick({ overruns: 13, errUs: 2 }), { p50Us: 3, p99Us: 781, maxUs: 1818 }],
    ];
    for (const width of [24, 40, 60, 62, 80]) {
      for (const [t, period] of cases) {
        const lines = loopLines(state(t, period), width, 5);
        for (const l of lines.slice(0, 3)) expect(visibleLength(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
        const text = lines.join('\n').replace(/\{[^{}]*\}/g, '');
        expect(text, `${width}`).toMatch(new RegExp(`late ${t.timing.overruns}\\b`));
        if (t.link.lost) expect(text).toMatch(new RegExp(`lost ${t.link.lost}\\b`));
      }
    }
    // with room, everything docs/dashboard.md's screenshot shows
    const wide = loopLines(state(cases[2]![0]), 62, 5)
      .join('\n')
      .replace(/\{[^{}]*\}/g, '');
    expect(wide).toContain('sample->answer [us] now 2 p50 3 p99 781 max 1818  late 13');
  });

  it('a long recording path loses its middle, never its tick count or its file name (issue 35: texts cut at the panel width)', () => {
    const file = 'runs/a/very/deeply/nested/folder/of/recordings/from/the/lab/bench/session-2026-12-07/reach-then-circle.ndjson';
    for (const width of [40, 62, 80, 200]) {
      const lines = loopLines({ ...state(tick({})), recording: { file, ticks: 123456 } }, width, 6);
      const rec = lines.find((l) => l.includes('rec{/red-fg}'))!;
      expect(visibleLength(rec), `${width}: ${rec}`).toBeLessThanOrEqual(width);
      const text = rec.replace(/\{[^{}]*\}/g, '');
      expect(text).toMatch(/123456 ticks/);
      expect(text).toContain(width >= 62 ? 'reach-then-circle.ndjson' : 'circle.ndjson'); // 40 columns leave 21 for the path: the name's end
      if (width === 200) expect(text).toContain(`${file}  123456 ticks  (r to stop)`);
    }
  });

  it("shows the samples of the adapter's bursts apart from the late ones (issue 35: they were counted late)", () => {
    const t = tick({ overruns: 2, burst: 9728 });
    const wide = loopLines(state(t), 80, 5)
      .join('\n')
      .replace(/\{[^{}]*\}/g, '');
    expect(wide).toContain('late 2 burst 9728');
    for (const width of [24, 40, 60]) {
      const lines = loopLines(state(t), width, 5);
      for (const l of lines.slice(0, 3)) expect(visibleLength(l), `${width}: ${l}`).toBeLessThanOrEqual(width);
      expect(lines.join('\n').replace(/\{[^{}]*\}/g, '')).toMatch(/late 2\b/);
    }
  });
});
