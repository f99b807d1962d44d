/**
 * Trajectory files: the user's own via points, as JSON validated with zod.
 *
 * ```json
 * {
 *   "name": "pick-and-place",
 *   "units": "deg",
 *   "elbow": "down",
 *   "start": { "q": [0, 90] },
 *   "steps": [
 *     { "joint": [30, 60], "duration": 1.0 },
 *     { "line": [0.30, 0.20], "duration": 1.2 },
 *     { "circle": { "centre": [0.30, 0.12], "turns": 1 }, "duration": 3 },
 *     { "hold": 0.5 }
 *   ]
 * }
 * ```
 * Joint angles are in `units` (deg by default), endpoint positions in m, durations in s.
 */
import { z } from 'zod';
import type { PathSpec } from '../model/builtins.js';
import type { PathStep } from '../model/trajectory.js';
import { sampledDuration } from '../model/sampled-path.js';
import { parseJsonText, readConfigText } from './load.js';
import { describeIssues, oneLine, RigFileError } from './rig.js';

const num = z.number().refine(Number.isFinite, 'must be a finite number');
/** A step's length [s]: a day at most (a longer one is a typo, and --cycle repeats a file for a soak). */
const duration = num
  .refine((v) => v > 0, 'must be > 0 s')
  .refine((v) => v <= 86_400, 'must be at most 86400 s (a day; --cycle repeats a trajectory)');
const pair = z.array(num).min(1).max(2);

const stepSchema = z.union([
  z.strictObject({ joint: pair, duration }),
  z.strictObject({ line: z.tuple([num, num]), duration }),
  z.strictObject({
    circle: z.strictObject({ centre: z.tuple([num, num]), turns: z.number().int().min(1).max(100).default(1) }),
    duration,
  }),
  z.strictObject({ hold: duration }),
  // a dense joint path (twolink teach): angles every dt seconds, followed as a cubic B-spline
  z.strictObject({
    samples: z.strictObject({ dt: num.refine((v) => v >= 1e-3 && v <= 1, 'must be 0.001..1 s'), q: z.array(pair).min(2).max(1_000_000) }),
  }),
]);

/** A point marked while teaching: its time on the path [s], the joint angles (in `units`), a label. */
const waypointSchema = z.strictObject({ t: num.refine((v) => v >= 0, 'must be >= 0 s'), q: pair, label: z.string().max(200).optional() });

export const trajectoryFileSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  units: z.enum(['deg', 'rad']).default('deg'),
  elbow: z.enum(['down', 'up']).default('down'),
  start: z.union([z.strictObject({ q: pair }), z.strictObject({ xy: z.tuple([num, num]) })]),
  steps: z.array(stepSchema).min(1).max(10_000),
  /** Points marked while teaching (twolink teach). */
  waypoints: z.array(waypointSchema).max(10_000).optional(),
  /** How a taught file was made (twolink teach): for people and for the replay report. */
  taught: z
    .strictObject({
      rig: z.string(),
      /** The rig file's content hash when it was taught (config/rig-hash.ts); replay refuses another rig's. */
      rigSha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex (64 characters 0-9 a-f)')
        .optional(),
      target: z.string(),
      recordedS: num,
      rateHz: num,
      smoothingHz: num,
      slowdown: num,
    })
    .optional(),
});

export type TrajectoryFile = z.infer<typeof trajectoryFileSchema>;

/** Converts a validated trajectory file into a path description. */
export function pathFromFile(f: TrajectoryFile, file: string): PathSpec {
  const k = f.units === 'deg' ? Math.PI / 180 : 1;
  const steps: PathStep[] = f.steps.map((s) => {
    if ('joint' in s) return { kind: 'joint', to: s.joint.map((v) => v * k), duration: s.duration };
    if ('line' in s) return { kind: 'line', to: s.line, duration: s.duration };
    if ('circle' in s) return { kind: 'circle', centre: s.circle.centre, turns: s.circle.turns, duration: s.duration };
    if ('samples' in s)
      return {
        kind: 'samples',
        dt: s.samples.dt,
        q: s.samples.q.map((p) => p.map((v) => v * k)),
        duration: sampledDuration(s.samples.q.length, s.samples.dt),
      };
    return { kind: 'hold', duration: s.hold };
  });
  const start = 'q' in f.start ? { q: f.start.q.map((v) => v * k), elbow: f.elbow } : { xy: f.start.xy, elbow: f.elbow };
  const name = f.name ?? file.replace(/^.*\//, '').replace(/\.json$/, '');
  return { name, description: f.description ?? `trajectory file ${file}`, start, steps, ...(f.taught ? { taught: true } : {}) };
}

/** Where a trajectory file was taught (its `taught` section's rig and hash), or undefined for a file not taught. */
export function taughtOrigin(file: string): { rig: string; rigSha256?: string } | undefined {
  const r = trajectoryFileSchema.safeParse(parseJsonText(readConfigText(file, 'trajectory file'), file));
  const t = r.success ? r.data.taught : undefined;
  return t ? { rig: t.rig, ...(t.rigSha256 ? { rigSha256: t.rigSha256 } : {}) } : undefined;
}

/** Reads and validates a trajectory file; errors name the file and the field. */
export function loadTrajectoryFile(file: string): PathSpec {
  const raw = parseJsonText(readConfigText(file, 'trajectory file'), file);
  const r = trajectoryFileSchema.safeParse(raw);
  if (!r.success) {
    const { field, problems } = describeIssues(r.error.issues, raw);
    throw new RigFileError(file, oneLine(problems), field);
  }
  return pathFromFile(r.data, file);
}
