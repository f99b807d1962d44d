/**
 * `npm run bench -- --only hardware` (issue 33): the seed reach on the mock rig with the flaws of the
 * arms users build (the mock's plant: gearbox play at the output with the encoder on the motor side,
 * Stribeck stiction, the H-bridge), each flaw alone and all together, feedforward + PID and PID alone.
 * Per run: the tracking RMS per phase (approach, trajectory, way back) of the encoder (motor side) and
 * of the link (the plant's true angle), the duty reversals per second in motion (control/reversals.ts),
 * and whether it was done. VIRTUAL time (the same physics whatever the machine does), the rig's
 * 500 Hz behind the Uno's 16U2 adapter model, no payload.
 */
import { readFileSync } from 'node:fs';
import { resolveRig, type Rig } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import { builtinPath } from '../model/builtins.js';
import { virtualRun } from '../run/virtual.js';
import { describeStop } from '../control/stop.js';
import { load1, section, type BenchResult } from './report.js';

/** The flaws of one bench case. */
export interface HardwareFlaws {
  /** Gearbox play at the output per joint [deg] (the plant's). */
  playDeg?: number;
  /** Breakaway friction as a multiple of the plant's Coulomb level. */
  breakawayX?: number;
  /** The H-bridge declared for both motors (the plant has it too). */
  driver?: 'tb6612' | 'l298n';
  /** The host knows the play (encoders[].backlashDeg) and the friction (friction.coulomb, breakawayNm). */
  declared?: boolean;
}

/** The mock rig (rigs/mock-arm.json) with `flaws` in its plant, and in what the host believes when declared. */
export function hardwareRig(flaws: HardwareFlaws, file = 'rigs/mock-arm.json'): Rig {
  const f = JSON.parse(readFileSync(file, 'utf8')) as {
    plant: { coulomb: number[]; backlashDeg?: number[]; breakawayNm?: number[] };
    motors: { driver?: string }[];
    encoders: { backlashDeg?: number }[];
    friction?: { coulomb?: number[]; breakawayNm?: number[] };
  };
  const coulomb = f.plant.coulomb;
  if (flaws.playDeg) f.plant.backlashDeg = coulomb.map(() => flaws.playDeg!);
  if (flaws.breakawayX) f.plant.breakawayNm = coulomb.map((c) => c * flaws.breakawayX!);
  if (flaws.driver) for (const m of f.motors) m.driver = flaws.driver;
  if (flaws.declared) {
    if (flaws.playDeg) for (const e of f.encoders) e.backlashDeg = flaws.playDeg;
    f.friction = { coulomb, ...(flaws.breakawayX ? { breakawayNm: coulomb.map((c) => c * flaws.breakawayX!) } : {}) };
  }
  const label = `${file} + ${JSON.stringify(flaws)}`;
  return resolveRig(parseRigFile(f, label), label);
}

const CASES: { name: string; flaws: HardwareFlaws }[] = [
  { name: 'no flaw (the mock as it is)', flaws: {} },
  { name: 'play 1.5 deg, not declared', flaws: { playDeg: 1.5 } },
  { name: 'play 1.5 deg, declared', flaws: { playDeg: 1.5, declared: true } },
  { name: 'play 3 deg, not declared', flaws: { playDeg: 3 } },
  { name: 'play 3 deg, declared', flaws: { playDeg: 3, declared: true } },
  { name: 'breakaway 4x Coulomb, not declared', flaws: { breakawayX: 4 } },
  { name: 'breakaway 4x Coulomb, declared', flaws: { breakawayX: 4, declared: true } },
  { name: 'TB6612 (declared, modelled)', flaws: { driver: 'tb6612' } },
  { name: 'all: play 1.5, breakaway 4x, TB6612, not declared', flaws: { playDeg: 1.5, breakawayX: 4, driver: 'tb6612' } },
  { name: 'all: play 1.5, breakaway 4x, TB6612, declared', flaws: { playDeg: 1.5, breakawayX: 4, driver: 'tb6612', declared: true } },
  { name: 'all: play 3, breakaway 4x, TB6612, declared', flaws: { playDeg: 3, breakawayX: 4, driver: 'tb6612', declared: true } },
];

export async function benchHardware(): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const pair = (a: readonly number[]): string => a.map((v) => v.toFixed(2)).join('/');
  const loadAtStart = load1();
  for (const c of CASES) {
    const rig = hardwareRig(c.flaws);
    for (const ff of ['desired', 'none'] as const) {
      const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { feedforward: ff, keepRows: false });
      const s = r.summary;
      const done = s.stop.kind === 'done';
      const phases = (['approach', 'trajectory', 'park'] as const).map((k) => {
        const p = s.phases?.[k];
        if (!p) return `${k} -`;
        return `${k} enc ${pair(p.encoder.rmsDeg)} link ${p.link ? pair(p.link.rmsDeg) : '-'}`;
      });
      const warned = r.events.filter((e) => e.kind === 'reversals').length;
      rows.push([
        `${c.name}, ${ff === 'none' ? 'PID alone' : 'FF+PID'}`,
        done ? 'done 1/1' : 'NOT done 0/1',
        `RMS deg j1/j2: ${phases.join('; ')}; reversals/s ${pair(s.reversals!.perS)}${warned ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}${done ? '' : `; ${describeStop(s.stop)}`}`,
      ]);
      const key = `${c.name.replace(/[^a-z0-9]+/gi, '_')}_${ff}`;
      figures[`${key}_done`] = done ? 1 : 0;
      figures[`${key}_reversalsPerS`] = s.reversals!.perS;
      for (const k of ['approach', 'trajectory', 'park'] as const) {
        const p = s.phases?.[k];
        if (p) figures[`${key}_${k}_encoderRmsDeg`] = p.encoder.rmsDeg;
        if (p?.link) figures[`${key}_${k}_linkRmsDeg`] = p.link.rmsDeg;
      }
    }
  }
  const title = `Hardware flaws (issue 33): the seed reach, VIRTUAL time, 500 Hz, mock rig with the 16U2 adapter model, no payload; encoder = motor side, link = the plant's true angle (load ${loadAtStart.toFixed(2)} at the start, no effect on virtual time)`;
  return section(title, rows, figures);
}
