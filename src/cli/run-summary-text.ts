/**
 * The run's summary for people: the lines `twolink run` prints after a run (without --json), each
 * derived from the summary's values (src/run/stats.ts), never parsed back.
 */
import { stiffnessUnit } from '../control/impedance.js';
import type { RunSummary } from '../run/stats.js';

/**
 * How late the board applied the host's answers: learned on the line protocol (its telemetry names the
 * sample each command came back with); unknown where the board's reports carry no sample number (Firmata).
 */
function answerDelayText(samples: number | null, cable: string): string {
  return samples === null
    ? `answers' delay not measured (this link's reports carry no sample number; cable: ${cable})`
    : `answers apply ${samples} sample(s) later (learned; cable: ${cable})`;
}

/**
 * The late samples and the burst samples, apart: "late 3 (answers past their deadline); 9727 in the
 * link's bursts (delivered with a newer sample, only the newest answered: not late)".
 */
export function lateText(s: Pick<RunSummary, 'overruns' | 'burst'>): string {
  const burst =
    s.burst === undefined ? '' : `; ${s.burst} in the link's bursts (delivered with a newer sample, only the newest answered: not late)`;
  return `late ${s.overruns} (answers past their deadline)${burst}`;
}

export function humanSummary(s: RunSummary, cable: string, float = false): string {
  const f = (a: number[]): string => a.map((v) => v.toFixed(3)).join(', ');
  return [
    `stop: ${s.stopReason}${s.stopOutcome ? ` (zero command ${s.stopOutcome})` : ''}`,
    `samples: ${s.ticks} at ${s.rateHz} Hz (the board's clock); latency (sample -> command written, answered samples) p50 ${s.period.p50Us} us, p99 ${s.period.p99Us} us, max ${s.period.maxUs} us; ${lateText(s)}`,
    ...(s.timing
      ? [
          `timing: host CPU ${s.timing.hostCpuPct.toFixed(1)} % of a core${s.timing.mockCpuPct !== null ? ` (mock rig's thread ${s.timing.mockCpuPct.toFixed(1)} %)` : ''}, longest gap between answered samples ${s.timing.maxStallMs.toFixed(1)} ms (board time), ${answerDelayText(s.timing.answerDelaySamples, cable)}, real-time scheduling ${s.timing.rt ? 'on' : 'off'}` +
            (s.timing.mock
              ? `; the simulated board fell behind at most ${s.timing.mock.maxStarvedMs.toFixed(1)} ms (${s.timing.mock.lateTimers} late timers, up to ${s.timing.mock.maxLateMs.toFixed(1)} ms${s.timing.mock.lateTimers > 0 ? ": its own thread was starved, not the host's fault" : ''})`
              : ''),
        ]
      : []),
    float
      ? 'float: the arm went where the hand (or a push) took it; the tracking error against the held pose is no measure here'
      : trackingLine(s.tracking),
    ...(s.replay ? [replayLine(s.replay)] : []),
    ...(float ? [] : phaseLines(s)),
    `twin residual RMS [deg]: ${f(s.twin.rmsDeg)}   max: ${f(s.twin.maxDeg)}   alarms: ${s.twin.alarms}`,
    `link: sent ${s.link.sent}, received ${s.link.received}, lost ${s.link.lost}, corrupt ${s.link.corrupt}`,
    ...(s.impedance ? [impedanceLine(s.impedance)] : []),
  ].join('\n');
}

/** The summary's impedance line: the spring in force and the force estimate at the last rest. */
function impedanceLine(i: NonNullable<RunSummary['impedance']>): string {
  const f = i.forceEstimateN ? `(${i.forceEstimateN.map((v) => v.toFixed(2)).join(', ')}) N` : 'none (the arm never came to rest)';
  return `impedance (${i.space}): stiffness ${i.stiffness} ${stiffnessUnit(i.space)}, damping ratio ${i.dampingRatio}; force estimate at the last rest ${f}`;
}

/** The summary's tracking line; a run that tracked nothing says so rather than print zeros. */
export function trackingLine(t: RunSummary['tracking']): string {
  const f = (a: number[]): string => a.map((v) => v.toFixed(3)).join(', ');
  if (t.covers === 'none' || t.samples === 0) return 'tracking: no sample tracked (the run ended before any trajectory began)';
  const what = t.covers === 'approach' ? ' on the approach only (the run ended before the trajectory proper)' : '';
  return `tracking RMS [deg]${what}: ${f(t.rmsDeg)}   max: ${f(t.maxDeg)}`;
}

/**
 * The tracking of every phase the run entered (approach, trajectory, way back), for the encoder (saying
 * where it sits: a motor-side encoder's figure is the motor's) and, where the run knows it, the link;
 * then the duty reversals (src/control/reversals.ts).
 */
export function phaseLines(s: Pick<RunSummary, 'phases' | 'encoderSide' | 'reversals' | 'measuredPlay'>): string[] {
  const f = (a: readonly (number | null)[]): string => a.map((v) => (v === null ? '-' : v.toFixed(3))).join(', ');
  const names = { approach: 'approach', trajectory: 'trajectory', park: 'way back' } as const;
  const entered = (['approach', 'trajectory', 'park'] as const).filter((k) => s.phases?.[k]);
  const out: string[] = [];
  if (entered.length) {
    const side = s.encoderSide
      ? `encoder (${s.encoderSide.every((x) => x === s.encoderSide![0]) ? `${s.encoderSide[0]} side` : s.encoderSide.map((x, i) => `joint ${i + 1} ${x} side`).join(', ')})`
      : 'encoder';
    out.push(
      `tracking per phase, ${side}, RMS / max [deg]: ${entered.map((k) => `${names[k]} ${f(s.phases![k]!.encoder.rmsDeg)} / ${f(s.phases![k]!.encoder.maxDeg)}`).join('; ')}`,
    );
    const linked = entered.filter((k) => s.phases![k]!.link);
    if (linked.length)
      out.push(
        `tracking per phase, link (its true angle), RMS / max [deg]: ${linked.map((k) => `${names[k]} ${f(s.phases![k]!.link!.rmsDeg)} / ${f(s.phases![k]!.link!.maxDeg)}`).join('; ')}`,
      );
    const sensed = entered.filter((k) => s.phases![k]!.linkSensor);
    if (sensed.length)
      out.push(
        `tracking per phase, link (potentiometer), RMS / max [deg]: ${sensed.map((k) => `${names[k]} ${f(s.phases![k]!.linkSensor!.rmsDeg)} / ${f(s.phases![k]!.linkSensor!.maxDeg)}`).join('; ')}`,
      );
  }
  const p = s.measuredPlay;
  if (p)
    out.push(
      `gearbox play measured, encoder (motor side) - link (potentiometer), per joint [deg]: ${f(p.playDeg)} (samples pushing + / -: ${p.samples.map(([a, b]) => `${a}/${b}`).join(', ')})${p.playDeg.includes(null) ? '; -: no link sensor, or the torque never held each sign for 0.1 s' : ''}`,
    );
  const r = s.reversals;
  if (r && r.movingS.some((m) => m > 0))
    out.push(
      `duty reversals per second in motion: ${r.perS.map((v) => v.toFixed(2)).join(', ')} (${r.count.join(', ')} in ${r.movingS.map((v) => v.toFixed(1)).join(', ')} s)`,
    );
  return out;
}

/** The replay report of a run that followed a taught motion. */
export function replayLine(r: NonNullable<RunSummary['replay']>): string {
  const f = (a: number[]): string => a.map((v) => v.toFixed(3)).join(', ');
  return `replay: RMS [deg] ${f(r.rmsDeg)}   max: ${f(r.maxDeg)}   endpoint RMS ${r.endpointRmsMm.toFixed(2)} mm, max ${r.endpointMaxMm.toFixed(2)} mm`;
}
