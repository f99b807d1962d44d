/**
 * The built-in trajectories, scaled to the arm. Each is a path description (start + steps) so that a
 * run can put an approach from wherever the arm is in front of it.
 */
import type { PathStart, PathStep } from './trajectory.js';
import type { ArmParams } from './types.js';
import { isTwoLink } from './types.js';

/** A path before it is built: where it starts and what it does. */
export interface PathSpec {
  name: string;
  description: string;
  start: PathStart;
  steps: PathStep[];
  /** A taught motion (twolink teach): a run that follows it reports how well it replayed. */
  taught?: boolean;
  /**
   * A hold whose length is the run's time limit (`--traj hold`): the limit reached once the path has
   * left its approach is `done`, not `timeout` (the hold did what was asked; on a busy machine the
   * board's clock, which times the hold, falls behind the host's, which times the limit).
   */
  untilLimit?: boolean;
}

const DEG = Math.PI / 180;

/** The pose the arm hangs in with the motors off (gravity's stable equilibrium) [deg]: setup's zero, and a reconnect's. */
export function hangingDeg(joints: number): number[] {
  return joints === 2 ? [-90, 0] : [-90];
}

/**
 * Fraction of the reach where `reach` starts. Seed 002's reach starts with the elbow straight at
 * (L1 + L2, 0), where a minimum-jerk start needs unbounded joint acceleration (see trajectory.ts);
 * starting at 98% of the reach keeps the same movement with finite torques.
 */
export const REACH_START_FRACTION = 0.98;

/** Names of the built-in trajectories for an arm. */
export function builtinNames(arm: ArmParams): string[] {
  return isTwoLink(arm) ? ['reach', 'point', 'circle'] : ['point'];
}

/** A built-in trajectory by name, or undefined. */
export function builtinPath(arm: ArmParams, name: string): PathSpec | undefined {
  if (!isTwoLink(arm)) {
    if (name !== 'point') return undefined;
    return {
      name,
      description: 'joint-space point-to-point: 0 deg -> 60 deg -> 0 deg, 1.5 s each, minimum jerk',
      start: { q: [0] },
      steps: [
        { kind: 'joint', to: [60 * DEG], duration: 1.5 },
        { kind: 'hold', duration: 0.3 },
        { kind: 'joint', to: [0], duration: 1.5 },
      ],
    };
  }
  const R = arm.L1 + arm.L2;
  switch (name) {
    case 'reach':
      return {
        name,
        description:
          `seed 002's reach scaled to the arm: the endpoint from (${(REACH_START_FRACTION * R).toFixed(3)}, 0) to ` +
          `(${(R / 2).toFixed(3)}, ${(R / 2).toFixed(3)}) m in 1 s, minimum jerk, elbow down`,
        start: { xy: [REACH_START_FRACTION * R, 0], elbow: 'down' },
        steps: [
          { kind: 'line', to: [R / 2, R / 2], duration: 1 },
          { kind: 'hold', duration: 0.3 },
        ],
      };
    case 'point':
      return {
        name,
        description: 'joint-space point-to-point: (0, 90) -> (60, 30) -> (0, 90) deg, 1.5 s each, minimum jerk',
        start: { q: [0, 90 * DEG] },
        steps: [
          { kind: 'joint', to: [60 * DEG, 30 * DEG], duration: 1.5 },
          { kind: 'hold', duration: 0.3 },
          { kind: 'joint', to: [0, 90 * DEG], duration: 1.5 },
          { kind: 'hold', duration: 0.3 },
        ],
      };
    case 'circle': {
      const cx = 0.55 * R;
      const cy = 0.25 * R;
      const r = 0.15 * R;
      return {
        name,
        description: `endpoint circle of radius ${r.toFixed(3)} m about (${cx.toFixed(3)}, ${cy.toFixed(3)}) m, one turn in 3 s`,
        start: { xy: [cx + r, cy], elbow: 'down' },
        steps: [
          { kind: 'circle', centre: [cx, cy], turns: 1, duration: 3 },
          { kind: 'hold', duration: 0.3 },
        ],
      };
    }
    default:
      return undefined;
  }
}

/**
 * The same path `speed` times faster (0.5: half as fast): every step's duration divided by it, a
 * taught path's sample spacing too, and sines' frequencies multiplied by it. The geometry is the
 * same; velocities scale by `speed`, accelerations by its square.
 */
export function scalePath(spec: PathSpec, speed: number): PathSpec {
  if (!(speed > 0 && Number.isFinite(speed))) throw new RangeError(`speed must be a finite number > 0, got ${speed}`);
  if (speed === 1) return spec;
  const steps: PathStep[] = spec.steps.map((s) => {
    const duration = s.duration / speed;
    if (s.kind === 'samples') return { ...s, dt: s.dt / speed, duration };
    if (s.kind === 'sines')
      return {
        ...s,
        duration,
        ...(s.ramp !== undefined ? { ramp: s.ramp / speed } : {}),
        sines: s.sines.map((js) => js.map((c) => ({ ...c, frequencyHz: c.frequencyHz * speed }))),
      };
    return { ...s, duration };
  });
  return { ...spec, name: `${spec.name} x${speed}`, description: `${spec.description} (at ${speed}x speed)`, steps };
}
