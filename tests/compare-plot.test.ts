// The figures, read back as SVG: each panel has its title and axis titles, and one line per series;
// the residual panel has the alarm threshold; the page is self-contained; the titles of a row stand
// at one height; one colour means one thing; spikes beyond an axis are marked and counted. The figure's endpoint
// kinematics are checked against physics (the chain rule against finite differences, the reach's
// minimum-jerk profile).
import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { builtinPath } from '../src/model/builtins.js';
import { buildPath, minJerkProfile } from '../src/model/trajectory.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { endpoint } from '../src/model/kinematics.js';
import { alignRuns } from '../src/record/compare.js';
import { endpointDerivatives } from '../src/record/endpoint.js';
import { PLOT_FIELDS, renderHtml, renderSvg, runFigure } from '../src/record/figures.js';
import { trajectoryFigure } from '../src/record/trajectory-figure.js';
import { figure, panel, robustRange, STYLES } from '../src/record/plot-panels.js';
import { loadRecording } from '../src/record/read.js';
import { COMPARE_FIELDS } from '../src/record/compare.js';
import { RIG, writeSynthetic, type SyntheticRun } from './compare-synthetic.js';

interface Panel {
  title: string;
  /** The first line of the subtitle (what the curves are), '' if none. */
  subtitle: string;
  /** The second line of the subtitle (the note about values beyond the axis), '' if none. */
  note: string;
  /** Where the title's baseline is on the page [px]. */
  titleY: number;
  axisTitles: string[];
  /** Series of the line marks, one entry per <path>, in drawing order. */
  lines: string[];
  /** Stroke colour and width of each line, by series. */
  strokes: Record<string, { color: string; width: number }>;
  /** Colours of the rules (thresholds). */
  ruleColors: string[];
  /** Filled markers (values beyond the axis): their colours. */
  markers: string[];
  rules: number;
}

/** The page coordinate y of an element: the sum of its and its ancestors' translations. */
function pageY(e: Element): number {
  let y = 0;
  for (let n: Element | null = e; n && n.nodeType === 1; n = n.parentNode as Element | null) {
    const m = /translate\(([-\d.e]+),\s*([-\d.e]+)\)/.exec(n.getAttribute('transform') ?? '');
    if (m) y += Number(m[2]);
  }
  return y;
}

function elements(root: Element, pred: (e: Element) => boolean, out: Element[] = []): Element[] {
  for (let n = root.firstChild; n; n = n.nextSibling) {
    if (n.nodeType !== 1) continue;
    const e = n as Element;
    if (pred(e)) out.push(e);
    elements(e, pred, out);
  }
  return out;
}

const hasClass = (e: Element, c: string): boolean => (e.getAttribute('class') ?? '').split(/\s+/).includes(c);

/** The figure's panels (the concat cells that have a title), in order. */
function panels(svg: string): Panel[] {
  const errors: string[] = [];
  const doc = new DOMParser({ onError: (level, msg) => void (level !== 'warning' && errors.push(msg)) }).parseFromString(
    svg,
    'image/svg+xml',
  );
  expect(errors).toEqual([]);
  const root = doc.documentElement!;
  expect(root.tagName).toBe('svg');
  const cells = elements(root, (e) => /(^|\s)concat_\d+_group(\s|$)/.test(e.getAttribute('class') ?? ''));
  const out: Panel[] = [];
  for (const cell of cells) {
    const titleTexts = elements(cell, (e) => hasClass(e, 'role-title-text')).flatMap((g) => elements(g, (e) => e.tagName === 'text'));
    const title = titleTexts.map((t) => t.textContent ?? '');
    if (!title.length) continue;
    const sub = elements(cell, (e) => hasClass(e, 'role-title-subtitle')).flatMap((g) =>
      elements(g, (e) => e.tagName === 'text' || e.tagName === 'tspan'),
    );
    const subLines = sub.filter((e) => e.tagName === 'tspan').map((t) => (t.textContent ?? '').replace(/\u00a0/g, '').trim());
    const axisTitles = elements(cell, (e) => hasClass(e, 'role-axis-title'))
      .flatMap((g) => elements(g, (e) => e.tagName === 'text'))
      .map((t) => t.textContent ?? '');
    const paths = elements(cell, (e) => e.tagName === 'path' && e.getAttribute('aria-roledescription') === 'line mark');
    const series = (p: Element): string => /(?:^|; )s: ([^;]+)/.exec(p.getAttribute('aria-label') ?? '')?.[1] ?? '?';
    const lines = paths.map(series);
    const strokes: Panel['strokes'] = {};
    for (const p of paths)
      strokes[series(p)] = { color: p.getAttribute('stroke') ?? '', width: Number(p.getAttribute('stroke-width') ?? 1) };
    const ruleLines = elements(cell, (e) => hasClass(e, 'mark-rule') && hasClass(e, 'role-mark')).flatMap((g) =>
      elements(g, (e) => e.tagName === 'line'),
    );
    const markers = elements(cell, (e) => e.tagName === 'path' && e.getAttribute('aria-roledescription') === 'point').map(
      (p) => p.getAttribute('fill') ?? '',
    );
    out.push({
      title: title.join(' '),
      subtitle: subLines[0] ?? '',
      note: subLines[1] ?? '',
      titleY: pageY(titleTexts[0]!),
      axisTitles,
      lines,
      strokes,
      ruleColors: ruleLines.map((l) => l.getAttribute('stroke') ?? ''),
      markers,
      rules: ruleLines.length,
    });
  }
  return out;
}

const arm = RIG.arm as TwoLinkParams;

describe('the trajectory figure (seed 002)', () => {
  const spec = builtinPath(arm, 'reach')!;
  const traj = buildPath(arm, spec.start, spec.steps, spec.description);

  it('has the endpoint and joint rows of angle, velocity, acceleration and jerk, and the two paths', async () => {
    const svg = await renderSvg(trajectoryFigure(traj, arm, { title: 'reach' }));
    const p = panels(svg);
    expect(p.map((x) => x.title)).toEqual([
      'Endpoint linear displacement [m]',
      'Endpoint linear velocity [m/s]',
      'Endpoint linear acceleration [m/s²]',
      'Endpoint linear jerk [m/s³]',
      'Joint angular displacement [deg]',
      'Joint angular velocity [deg/s]',
      'Joint angular acceleration [deg/s²]',
      'Joint angular jerk [deg/s³]',
      'Endpoint space',
      'Joint space',
    ]);
    for (const x of p.slice(0, 4)) {
      expect(x.lines).toEqual(['x', 'y']);
      expect(x.axisTitles[0]).toBe('Time [s]');
      expect(x.axisTitles[1]).toMatch(/^x, y \[m/);
      expect(x.titleY).toBe(p[0]!.titleY);
    }
    for (const x of p.slice(4, 8)) {
      expect(x.lines).toEqual(['joint 1', 'joint 2']);
      expect(x.axisTitles).toContain('Time [s]');
      expect(x.titleY).toBe(p[4]!.titleY);
    }
    expect(p[9]!.titleY).toBe(p[8]!.titleY);
    expect(p[8]!.lines).toEqual(['endpoint']);
    expect(p[8]!.axisTitles).toEqual(['x [m]', 'y [m]']);
    expect(p[9]!.lines).toEqual(['joints']);
    expect(p[9]!.axisTitles).toEqual(['joint 1 [deg]', 'joint 2 [deg]']);
    expect(svg).toContain('>reach</text>');
  });

  it("draws the reach's endpoint from its start to its end along a straight line", () => {
    const fig = trajectoryFigure(traj, arm, { title: 'reach' }) as unknown as {
      concat: { layer?: { data?: { values: { x: number; y: number; s: string; k?: number }[] } }[] }[];
    };
    const path = fig.concat[8]!.layer!.find((l) => l.data?.values.some((v) => v.s === 'endpoint'))!.data!.values;
    const R = arm.L1 + arm.L2;
    expect(path[0]!.x).toBeCloseTo(0.98 * R, 4);
    expect(path[0]!.y).toBeCloseTo(0, 4);
    expect(path[path.length - 1]!.x).toBeCloseTo(R / 2, 4);
    expect(path[path.length - 1]!.y).toBeCloseTo(R / 2, 4);
    // On the line from start to end: the cross product with the direction is 0.
    const dx = R / 2 - 0.98 * R;
    const dy = R / 2;
    for (const v of path) expect(Math.abs((v.x - 0.98 * R) * dy - v.y * dx)).toBeLessThan(1e-5);
  });

  it('endpoint derivatives: the chain rule agrees with finite differences and with the minimum-jerk profile', () => {
    const D = 1;
    const R = arm.L1 + arm.L2;
    const dx = R / 2 - 0.98 * R;
    for (const t of [0.05, 0.3, 0.5, 0.77]) {
      const s = traj.sample(t);
      const e = endpointDerivatives(arm, s.q, s.qd, s.qdd, s.qddd);
      // The reach is a straight line at minimum-jerk timing: x(t) = x0 + dx s(t/D), so its derivatives
      // are dx s'(t/D)/D, dx s''/D^2, dx s'''/D^3.
      const prof = minJerkProfile(t / D);
      expect(e[0]).toBeCloseTo(0.98 * R + dx * prof[0], 9);
      expect(e[2]).toBeCloseTo((dx * prof[1]) / D, 8);
      expect(e[4]).toBeCloseTo((dx * prof[2]) / D ** 2, 7);
      expect(e[6]).toBeCloseTo((dx * prof[3]) / D ** 3, 6);
      expect(e[7]).toBeCloseTo(((R / 2) * prof[3]) / D ** 3, 6);
      // And the velocity is the time derivative of forward kinematics.
      const h = 1e-6;
      const p1 = endpoint(arm, traj.sample(t + h).q);
      const p0 = endpoint(arm, traj.sample(t - h).q);
      expect(e[2]).toBeCloseTo((p1[0] - p0[0]) / (2 * h), 6);
      expect(e[3]).toBeCloseTo((p1[1] - p0[1]) / (2 * h), 6);
    }
  });
});

describe('the run figure', () => {
  const base: SyntheticRun = {
    rateHz: 100,
    q0: [-0.2, 0.1],
    approachS: 0.3,
    parkS: 0.3,
    idleTicks: 5,
    error: (tau, j) => 0.01 * Math.sin(3 * tau + j),
    residual: (t, j) => (j === 0 ? 0.05 * Math.sin(2 * t) : 0.02),
  };

  it('overlays desired, measured, twin (and run B) per joint and endpoint; residual with the alarm; torques', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS])]);
    const b = await loadRecording(writeSynthetic({ ...base, q0: [-0.4, 0.2], approachS: 0.4 }).file, [
      ...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS]),
    ]);
    const al = alignRuns(a, b);
    const svg = await renderSvg(runFigure(a, RIG, { title: 'synthetic', other: al.bOnA }));
    const p = panels(svg);
    const kinds = ['angle [deg]', 'velocity [deg/s]', 'acceleration [deg/s²]', 'jerk [deg/s³]'];
    const ep = ['position [m]', 'velocity [m/s]', 'acceleration [m/s²]', 'jerk [m/s³]'];
    expect(p.map((x) => x.title)).toEqual([
      ...kinds.map((k) => `Joint 1 ${k}`),
      ...kinds.map((k) => `Joint 2 ${k}`),
      ...ep.map((k) => `Endpoint x ${k}`),
      ...ep.map((k) => `Endpoint y ${k}`),
      'Endpoint path',
      `Twin residual, alarm at ±${RIG.twin.alarmDeg} deg`,
      'Joint 1 torque [N m]',
      'Joint 2 torque [N m]',
    ]);
    for (const x of p.slice(0, 17)) {
      // One path per series, and only those.
      expect(x.lines).toEqual(['desired', 'measured', 'twin', 'measured B']);
    }
    for (const x of p.slice(0, 16)) expect(x.axisTitles[0]).toBe('Time [s]');
    expect(p[0]!.axisTitles[1]).toBe('[deg]');
    expect(p[12]!.axisTitles[1]).toBe('y [m]');
    expect(p[16]!.axisTitles).toEqual(['x [m]', 'y [m]']);
    const res = p[17]!;
    expect(res.lines).toEqual(['joint 1', 'joint 2']);
    expect(res.rules).toBe(2);
    expect(res.axisTitles).toEqual(['Time [s]', '[deg]']);
    for (const x of p.slice(18)) expect(x.lines).toEqual(['command', 'feedforward', 'PID']);
  });

  it('without a second run has no run B line; a window draws only its times', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...PLOT_FIELDS]);
    const spec = runFigure(a, RIG, { title: 'window', from: 0.5, to: 1 }) as unknown as {
      concat: { layer?: { data?: { values: { x: number | null }[] } }[] }[];
    };
    const xs = spec.concat[0]!.layer!.flatMap((l) => l.data?.values.map((v) => v.x) ?? []).filter(
      (x): x is number => typeof x === 'number',
    );
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0.5);
    expect(Math.max(...xs)).toBeLessThanOrEqual(1);
    const p = panels(await renderSvg(runFigure(a, RIG, { title: 'one run' })));
    expect(p[0]!.lines).toEqual(['desired', 'measured', 'twin']);
  });

  it('titles of a row stand at one height, whatever sticks out of the panels (legends, spikes, long labels)', async () => {
    const spiky: SyntheticRun = { ...base, error: (tau, j) => 0.01 * Math.sin(3 * tau + j) + (tau >= 0.5 && tau < 0.51 ? 0.05 : 0) };
    const a = await loadRecording(writeSynthetic(spiky).file, [...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS])]);
    const b = await loadRecording(writeSynthetic({ ...base, q0: [-0.4, 0.2], approachS: 0.4 }).file, [
      ...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS]),
    ]);
    const p = panels(await renderSvg(runFigure(a, RIG, { title: 'rows', other: alignRuns(a, b).bOnA })));
    expect(p).toHaveLength(20);
    for (let row = 0; row < 5; row++) {
      const ys = p.slice(4 * row, 4 * row + 4).map((x) => x.titleY);
      expect(ys, `row ${row + 1}: ${p[4 * row]!.title}`).toEqual([ys[0], ys[0], ys[0], ys[0]]);
    }
  });

  it('measured and twin acceleration and jerk say they are filtered, and by how much', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...PLOT_FIELDS]);
    const p = panels(await renderSvg(runFigure(a, RIG, { title: 'filters', smoothS: 0.05 })));
    const sub = (title: string): string => p.find((x) => x.title === title)!.subtitle;
    expect(sub('Joint 1 angle [deg]')).toBe('as recorded');
    expect(sub('Joint 2 acceleration [deg/s²]')).toBe('measured, twin: filtered (S-G 50 ms)');
    expect(sub('Joint 2 jerk [deg/s³]')).toBe('measured, twin: filtered (S-G 100 ms)');
    expect(sub('Endpoint x acceleration [m/s²]')).toBe('measured, twin: filtered (S-G 50 ms)');
  });

  it('a spike beyond the axis is drawn on its edge, marked and counted; a smooth curve is shown whole', async () => {
    // A smooth curve of 1000 samples with 5 samples 50 times its amplitude.
    const spikes = new Set([200, 201, 600, 601, 602]);
    const pts = Array.from({ length: 1000 }, (_, i) => ({
      x: i / 100,
      y: spikes.has(i) ? (i < 600 ? 50 : -40) : Math.sin(i / 50),
      s: 'measured',
    }));
    const yDomain = robustRange(pts)!;
    expect(yDomain[1]).toBeGreaterThan(1);
    expect(yDomain[1]).toBeLessThan(1.2);
    const spec = figure(
      'spikes',
      [],
      [[panel({ title: 'spiky', xTitle: 'Time [s]', yTitle: '[deg]', points: pts, series: [STYLES.measured], yDomain })]],
    );
    const p = panels(await renderSvg(spec))[0]!;
    expect(p.note).toBe('▲▼ 5 beyond the axis, peak 50');
    expect(p.markers).toEqual(Array(5).fill(STYLES.measured.color));
    // every point drawn lies within the axis: nothing is cut off at the border
    const cell = (spec as unknown as { concat: { layer: { data?: { values: { y: number | null }[] } }[] }[] }).concat[0]!;
    const drawn = cell.layer
      .flatMap((l) => l.data?.values ?? [])
      .map((v) => v.y)
      .filter((y): y is number => typeof y === 'number');
    expect(drawn.length).toBe(1005);
    for (const y of drawn) expect(y >= yDomain[0] && y <= yDomain[1]).toBe(true);
    // the smooth curve alone is shown whole: nothing beyond the axis
    const smooth = pts.filter((_, i) => !spikes.has(i));
    const q = panels(
      await renderSvg(
        figure(
          'smooth',
          [],
          [
            [
              panel({
                title: 'smooth',
                xTitle: 'Time [s]',
                yTitle: '[deg]',
                points: smooth,
                series: [STYLES.measured],
                yDomain: robustRange(smooth)!,
              }),
            ],
          ],
        ),
      ),
    )[0]!;
    expect(q.note).toBe('');
    expect(q.markers).toEqual([]);
  });

  it('the feedforward torque is drawn over the command, which is wide and pale underneath', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...PLOT_FIELDS]);
    const p = panels(await renderSvg(runFigure(a, RIG, { title: 'torques' })));
    for (const x of p.filter((q) => /torque/.test(q.title))) {
      expect(x.lines.indexOf('command')).toBeLessThan(x.lines.indexOf('feedforward'));
      expect(x.strokes.command!.width).toBeGreaterThan(2 * x.strokes.feedforward!.width);
      expect(x.strokes.command!.color).not.toBe(x.strokes.feedforward!.color);
    }
  });

  it('one colour means one thing in every panel of both figures', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS])]);
    const b = await loadRecording(writeSynthetic({ ...base, q0: [-0.4, 0.2], approachS: 0.4 }).file, [
      ...new Set([...COMPARE_FIELDS, ...PLOT_FIELDS]),
    ]);
    const spec = builtinPath(arm, 'reach')!;
    const all = [
      ...panels(await renderSvg(runFigure(a, RIG, { title: 'colours', other: alignRuns(a, b).bOnA }))),
      ...panels(await renderSvg(trajectoryFigure(buildPath(arm, spec.start, spec.steps, spec.description), arm, { title: 'reach' }))),
    ];
    const byColour = new Map<string, Set<string>>();
    const byName = new Map<string, Set<string>>();
    for (const x of all) {
      for (const [name, st] of Object.entries(x.strokes)) {
        byColour.set(st.color, (byColour.get(st.color) ?? new Set()).add(name));
        byName.set(name, (byName.get(name) ?? new Set()).add(st.color));
      }
    }
    for (const [c, names] of byColour) expect([...names], `colour ${c}`).toHaveLength(1);
    for (const [n, colours] of byName) expect([...colours], `series ${n}`).toHaveLength(1);
    expect(byName.get('joint 1')).toEqual(new Set([STYLES.joint1.color]));
    // the alarm threshold has a colour of its own
    const rules = all.flatMap((x) => x.ruleColors);
    expect(rules.length).toBe(2);
    for (const c of rules) expect(byColour.has(c)).toBe(false);
  });

  it('as HTML: one page with the vega runtime inlined and the figure in it, nothing fetched', async () => {
    const a = await loadRecording(writeSynthetic(base).file, [...PLOT_FIELDS]);
    const html = await renderHtml(runFigure(a, RIG, { title: 'page <test>' }), 'page <test>');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('<title>page &lt;test&gt;</title>');
    expect(html).toContain('Joint 1 angle [deg]');
    expect(html).toMatch(/new vega\.View/);
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html.length).toBeGreaterThan(300_000);
  });
});
