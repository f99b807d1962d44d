/**
 * tune's figures as vega-lite specs (rendered to SVG by record/plot-panels.ts renderSvg, as the
 * run figures are): per joint a Bode plot of the measured plant with its coherence, the identified
 * model's response overlaid, and the measured loop with its crossover and phase crossover marked;
 * and the validation's step response. Each title says virtual or real time. Indices into bins and
 * samples keep their `!`.
 */
import type { TopLevelSpec } from 'vega-lite';
import { abs, type C, unwrapDeg } from './complex.js';
import type { JointTune } from './joint-steps.js';

interface Row {
  f: number;
  db: number;
  deg: number;
  series: string;
}

function rows(freqHz: readonly number[], h: readonly C[], series: string): Row[] {
  const ph = unwrapDeg(h);
  return freqHz.map((f, i) => ({ f, db: 20 * Math.log10(abs(h[i]!)), deg: ph[i]!, series }));
}

/** The Bode figure of one joint: magnitude, phase (with the 0 dB and -180 deg lines the margins are read against) and the coherence of the measured bands. */
export function bodeFigure(t: JointTune, clock: string): TopLevelSpec {
  const id = t.identified!;
  const m = t.measured;
  const data = [
    ...rows(id.bands.freqHz, id.bands.h, 'plant, measured'),
    ...rows(id.bands.freqHz, id.modelH, 'plant, model'),
    ...(m ? rows(m.loop.freqHz, m.loop.h, 'loop C P, measured') : []),
  ];
  const gmText = m
    ? Number.isFinite(m.phaseCrossoverHz)
      ? `phase crossover ${m.phaseCrossoverHz.toFixed(1)} Hz, GM ${m.gainMarginDb.toFixed(1)} dB`
      : `GM >= ${m.gainMarginAtLeastDb.toFixed(1)} dB (no phase crossover up to ${(m.loop.freqHz[m.loop.freqHz.length - 1] ?? 0).toFixed(1)} Hz)`
    : '';
  const lastHz = m ? (m.loop.freqHz[m.loop.freqHz.length - 1] ?? m.crossoverHz) : 0;
  // Each label on a line of its own at the top of the panel (ypx: pixels from the top), left of its rule when it is the higher frequency.
  const marks = m
    ? [
        { f: m.crossoverHz, label: `crossover ${m.crossoverHz.toFixed(2)} Hz, PM ${m.phaseMarginDeg.toFixed(1)} deg`, ypx: 10 },
        { f: Number.isFinite(m.phaseCrossoverHz) ? m.phaseCrossoverHz : lastHz, label: gmText, ypx: 24 },
      ]
    : [];
  const x = { field: 'f', type: 'quantitative', scale: { type: 'log' }, title: 'frequency [Hz]' } as const;
  const color = { field: 'series', type: 'nominal', title: null } as const;
  const rule = (y: number): object => ({
    data: { values: [{ y }] },
    mark: { type: 'rule', color: 'black', opacity: 0.4 },
    encoding: { y: { field: 'y', type: 'quantitative' } },
  });
  const panel = (field: 'db' | 'deg', title: string, ref: number): object => ({
    width: 560,
    height: 200,
    layer: [
      {
        data: { values: data },
        mark: { type: 'line', point: true },
        encoding: { x, y: { field, type: 'quantitative', title, scale: { zero: false } }, color },
      },
      rule(ref),
      {
        data: { values: marks },
        mark: { type: 'rule', strokeDash: [4, 3], color: 'gray' },
        encoding: { x: { field: 'f', type: 'quantitative' } },
      },
      {
        data: { values: marks },
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: {
          x: { field: 'f', type: 'quantitative' },
          y: { field: 'ypx', type: 'quantitative', scale: null },
          text: { field: 'label' },
        },
      },
    ],
  });
  const coherence = {
    width: 560,
    height: 80,
    data: { values: id.bands.freqHz.map((f, i) => ({ f, c: id.bands.coherence[i]! })) },
    mark: { type: 'line', point: true, color: 'gray' },
    encoding: { x, y: { field: 'c', type: 'quantitative', title: 'coherence (plant)', scale: { domain: [0, 1] } } },
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `joint ${t.joint + 1}: Bode (${clock}); bands with coherence >= 0.8`,
    vconcat: [panel('db', 'magnitude [dB] (rad/N m; loop: 1)', 0), panel('deg', 'phase [deg]', -180), coherence],
    resolve: { scale: { x: 'shared' } },
  } as TopLevelSpec;
}

/** The validation's step response of one joint [deg from the pose]. */
export function stepFigure(t: JointTune, poseRad: number, clock: string): TopLevelSpec {
  const m = t.measured!;
  const values = m.step.t.flatMap((s, i) => [
    { t: s, deg: ((m.step.q[i]! - poseRad) * 180) / Math.PI, series: 'measured' },
    { t: s, deg: s >= 0.2 ? (m.stepRad * 180) / Math.PI : 0, series: 'reference' },
  ]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: `joint ${t.joint + 1}: closed-loop step (${clock}): overshoot ${m.overshootPct.toFixed(1)} %, settling ${m.settlingS.toFixed(3)} s`,
    width: 560,
    height: 240,
    data: { values },
    mark: 'line',
    encoding: {
      x: { field: 't', type: 'quantitative', title: 'time [s]' },
      y: { field: 'deg', type: 'quantitative', title: 'angle from the pose [deg]' },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
}
