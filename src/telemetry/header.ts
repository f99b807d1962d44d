/**
 * The header line of a recording (the first line of the NDJSON that recorder.ts writes and
 * record/read.ts reads): its zod schema, written once. The writer checks its header against it, the
 * reader validates the line with it, so a recording twolink writes is one it can read. Fields added
 * after recordings existed are optional; unknown fields pass (a newer twolink's header still reads).
 */
import { z } from 'zod';

const perJoint = z.array(z.number()).min(1).max(2);

/**
 * The control law of a run, as its header records it (run/header.ts `runLaw`): twolink's feedforward +
 * PID with its settings, a user's controller (its file as given and the SHA-256 of its content when
 * the run loaded it), float mode or impedance mode with their parameters, or a law given in code (the
 * library's ControlLaw). A kind this version does not know still reads (a newer twolink's header).
 */
export const knownLawSchema = z.discriminatedUnion('kind', [
  z.looseObject({
    kind: z.literal('pid'),
    /** Inverse-dynamics feedforward on the desired state, computed torque on the measured one, or none. */
    feedforward: z.enum(['desired', 'measured', 'none']),
    /** The momentum observer's torque added to the feedforward. */
    disturbanceObserver: z.boolean(),
    /** The sample-to-command delay compensated with the model. */
    predict: z.boolean(),
    /** Gains per joint: kp [N m/rad], ki [N m/(rad s)], kd [N m s/rad], iLimitNm [N m]; `schedule`: points of the elbow [deg] with their gains. */
    pid: z.looseObject({
      kp: perJoint,
      ki: perJoint,
      kd: perJoint,
      iLimitNm: perJoint,
      antiWindup: z.string(),
      schedule: z.array(z.looseObject({ elbowDeg: z.number(), kp: perJoint, ki: perJoint, kd: perJoint })).optional(),
    }),
  }),
  z.looseObject({
    kind: z.literal('controller'),
    file: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex (64 digits)'),
  }),
  /** Float mode's settings (control/float.ts FloatSettings, SI units). */
  z.looseObject({
    kind: z.literal('float'),
    settings: z.looseObject({ frictionAssist: z.number(), torqueCapNm: perJoint, speedCapRadS: perJoint }),
  }),
  /** Impedance mode's spring: stiffness [N/m at the endpoint, N m/rad in joint space], damping ratio. */
  z.looseObject({ kind: z.literal('impedance'), space: z.enum(['endpoint', 'joint']), stiffness: z.number(), dampingRatio: z.number() }),
  /** A ControlLaw object given to the library (no file): its class name. */
  z.looseObject({ kind: z.literal('code'), name: z.string() }),
]);
export type RunLaw = z.output<typeof knownLawSchema>;
const KNOWN_LAWS: ReadonlySet<string> = new Set(['pid', 'controller', 'float', 'impedance', 'code']);

/** A recorded law: one of the known kinds checked in full, or another kind (a newer twolink's) as it is. */
export const lawSchema = z.union([
  knownLawSchema,
  z.looseObject({ kind: z.string().refine((k) => !KNOWN_LAWS.has(k), 'a law of a known kind with missing or bad fields') }),
]);

export const recordingHeaderSchema = z.looseObject({
  kind: z.literal('header'),
  /** The version of twolink that wrote it. */
  twolink: z.string(),
  /** The version of the board protocol (firmware-protocol/PROTOCOL.md). */
  protocol: z.number(),
  /** When the run started (ISO 8601, UTC). */
  startedAt: z.string(),
  /** Joints of the arm: the length of every per-joint array in the tick lines. */
  joints: z.union([z.literal(1), z.literal(2)]),
  /** The loop's rate [Hz]. */
  rateHz: z.number().positive(),
  /** The feedforward (`desired`, `measured`, `none`); the law says more. */
  feedforward: z.string().optional(),
  /** Where the arm was: `{ kind: 'mock' }` or `{ kind: 'port', path }`. */
  target: z.looseObject({ kind: z.string() }).optional(),
  /** Virtual time (run/virtual.ts); absent for real time. */
  clock: z.enum(['real', 'virtual']).optional(),
  /** Who started the recording when it is not --record (the dashboard's r key). */
  startedBy: z.string().optional(),
  /** The rig file as the run used it (`content`: its JSON). */
  rig: z.looseObject({ file: z.string(), name: z.string(), content: z.unknown() }),
  /** The trajectories of the run, in order. */
  trajectories: z.array(z.looseObject({ name: z.string(), description: z.string().optional() })).default([]),
  /** The test knobs injected into the mock rig (`--inject`): the name and the loop time [s]. */
  injections: z.array(z.looseObject({ name: z.string(), at: z.number() })).optional(),
  /** The control law (recordings before it have none: "law not recorded"). */
  law: lawSchema.optional(),
});

/** The named fields of a loose object's type (its index signature dropped). */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** A header as written (what `Recorder.open` takes): the schema's fields; the run's trajectories and injections as they are. */
export type RecordingHeader = Omit<Named<z.input<typeof recordingHeaderSchema>>, 'trajectories' | 'injections' | 'law'> & {
  law?: RunLaw;
  trajectories?: readonly { name: string; description?: string }[];
  injections?: readonly { name: string; at: number; value?: string }[];
};
/** A header as read back, validated. */
export type RecordingHeaderLine = z.output<typeof recordingHeaderSchema>;
