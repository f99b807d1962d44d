// The summary's timing figures recomputed from a recording's tick lines, with nothing of
// src/run/stats.ts but the definitions written there (TimingFigures): what a reader of the recording
// would compute.
import { readFileSync } from 'node:fs';

export interface RecordedFigures {
  p50: number;
  p99: number;
  max: number;
  periodP99: number;
  stallMs: number;
  answered: number;
}

/** The figures, recomputed from a recording's tick lines with nothing of stats.ts but its definitions. */
export function fromRecording(file: string): RecordedFigures {
  type Tick = { kind: string; fresh: number; boardT: number; timing: { errUs: number } };
  const ticks = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"kind":"tick"'))
    .map((l) => JSON.parse(l) as Tick);
  const fresh = ticks.filter((t) => t.fresh === 1);
  const answered = fresh.filter((t) => t.timing.errUs > 0);
  const lat = answered.map((t) => t.timing.errUs).sort((a, b) => a - b);
  const rank = (xs: number[], q: number): number => Math.floor(xs[Math.max(1, Math.ceil(q * xs.length)) - 1]!);
  const periods = fresh
    .slice(1)
    .map((t, i) => (t.boardT - fresh[i]!.boardT) * 1e6)
    .filter((p) => p > 0)
    .sort((a, b) => a - b);
  let gap = 0;
  // Between two answers written: each at its sample's board time plus its latency (stats.ts, TimingFigures).
  const written = (t: Tick): number => t.boardT + t.timing.errUs / 1e6;
  for (let i = 1; i < answered.length; i++) gap = Math.max(gap, written(answered[i]!) - written(answered[i - 1]!));
  return {
    p50: rank(lat, 0.5),
    p99: rank(lat, 0.99),
    max: Math.floor(lat.at(-1)!),
    periodP99: rank(periods, 0.99),
    stallMs: Math.round(gap * 1e4) / 10,
    answered: answered.length,
  };
}
