/**
 * Setup's last step: the first reach with the rig file it wrote, slowly and inside tight limits, so
 * that the arm's first real motion under feedforward + PID is a gentle one and the twin's alarm stops
 * it if the model is far off. Where the arm is (the mock in virtual time, or the port through a
 * Session) is the caller's `RunReach`; this module makes the gentle rig and path and judges the run.
 */
import { isStopOf } from '../control/stop.js';
import { preflight } from '../control/feasibility.js';
import type { Rig } from '../config/load.js';
import { builtinPath, type PathSpec } from '../model/builtins.js';
import type { RunSummary } from '../run/stats.js';
import type { StepResult } from './steps.js';

/** Runs `paths` on the arm with `rig` and returns the run's summary. */
export type RunReach = (rig: Rig, paths: PathSpec[]) => Promise<RunSummary>;

/**
 * How much slower than the built-in reach the first one is, and how much of the speed and torque
 * limits it may use (the torque must still hold the arm against gravity at full reach, with room for
 * a model that is some 20% light).
 */
export const SLOW = 2;
export const SPEED_FRACTION = 0.5;
export const TORQUE_FRACTION = 0.8;

/** The rig with tight limits: speeds and torques a fraction of the file's, and the twin's alarm stops the arm. */
export function gentleRig(rig: Rig): Rig {
  return {
    ...rig,
    limits: rig.limits.map((l) => ({ ...l, maxVel: l.maxVel * SPEED_FRACTION, maxTorque: l.maxTorque * TORQUE_FRACTION })),
    twin: { ...rig.twin, onAlarm: 'stop' },
  };
}

/** The built-in reach, `SLOW` times slower (every step's duration stretched). */
export function slowReach(rig: Rig): PathSpec {
  const p = builtinPath(rig.arm, 'reach');
  if (!p) throw new Error(`${rig.file}: no built-in reach for this arm`);
  return {
    ...p,
    name: 'first reach',
    description: `${p.description}, ${SLOW}x slower`,
    steps: p.steps.map((s) => ({ ...s, duration: s.duration * SLOW })),
  };
}

/** Runs the slow reach with the gentle rig and says how it went. */
export async function firstReach(rig: Rig, run: RunReach): Promise<StepResult> {
  const gentle = gentleRig(rig);
  const path = slowReach(rig);
  preflight(gentle, [path], { what: () => 'the first reach' });
  const s = await run(gentle, [path]);
  const f = (a: number[]): string => a.map((v) => v.toFixed(2)).join(', ');
  const evidence = {
    trajectory: path.description,
    stop: s.stop,
    stopReason: s.stopReason,
    trackingRmsDeg: s.tracking.rmsDeg,
    trackingMaxDeg: s.tracking.maxDeg,
    twinRmsDeg: s.twin.rmsDeg,
    twinAlarms: s.twin.alarms,
  };
  if (s.stop.kind !== 'done') {
    return {
      name: 'first reach',
      status: 'fail',
      summary: `the first reach stopped: ${s.stopReason}`,
      evidence,
      fix: isStopOf(s.stop, 'fault.wiring')
        ? 'the wiring is still wrong: see the stop reason, fix it and run setup again'
        : 'see the stop reason; run twolink identify (a gentle --amplitude 0.3) if the model is far from the arm, then setup again',
      corrected: false,
    };
  }
  return {
    name: 'first reach',
    status: s.twin.alarms > 0 ? 'warn' : 'pass',
    summary: `the reach, ${SLOW}x slower within ${SPEED_FRACTION * 100}% of the speed and ${TORQUE_FRACTION * 100}% of the torque limits, completed: tracking RMS [${f(s.tracking.rmsDeg)}] deg, twin residual RMS [${f(s.twin.rmsDeg)}] deg${s.twin.alarms ? `, ${s.twin.alarms} twin alarm(s)` : ''}`,
    evidence,
    fix: s.twin.alarms > 0 ? 'the model is off: run twolink identify (a gentle --amplitude 0.3) on the rig file written' : null,
    corrected: false,
  };
}
