/**
 * One tick of the loop as a flat row of numbers: what the loop records every period. The row layout
 * is fixed so that the worker can hand rows to the main thread through shared memory without
 * serialising them, and the recorder turns a row into an NDJSON line.
 */

/** Fields of a tick row, in order. Joint arrays have two slots (joint 2 is 0 for a one-link arm). */
export const TICK_FIELDS = [
  't', // loop time since the run started [s] (the board's clock)
  'i', // row index (0, 1, 2, ...: one row per sample, and one for a halt between samples)
  'state', // LoopState code
  'trajT', // time on the trajectory [s], -1 if none
  'phase', // TrajPhase code
  'qDes0', 'qDes1', // desired angles [rad]
  'qdDes0', 'qdDes1', // [rad/s]
  'qddDes0', 'qddDes1', // [rad/s^2]
  'q0', 'q1', // measured angles [rad]
  'qd0', 'qd1', // estimated velocities [rad/s]
  'twinQ0', 'twinQ1', // twin angles [rad]
  'twinQd0', 'twinQd1', // [rad/s]
  'res0', 'res1', // measured - twin [rad]
  'tauExt0', 'tauExt1', // observer's unexplained torque [N m]
  'tauFf0', 'tauFf1', // feedforward [N m]
  'tauPid0', 'tauPid1', // PID [N m]
  'tauCmd0', 'tauCmd1', // commanded after saturation and ramps [N m]
  'duty0', 'duty1', // motor duty -1..1
  'errUs', // latency: the board's sample instant (on the host's clock) to the answer written [us]
  'execUs', // time the sample's work took [us]
  'overruns', // samples answered late or not at all (a newer one had come), so far
  'missed', // samples lost on the way (gaps in the board's sample index), so far
  'sent', 'received', 'lost', 'corrupt', // link counters so far
  'alarm', // twin alarm bits (bit i = joint i+1)
  'flags', // board flags
  'boardT', // board time of the reading [s]
  'fresh', // 1 if a new reading arrived this tick
  'sat', // saturation bits (bit i = joint i+1 torque or duty limited)
  'sample', // the board's sample index, -1 for a row without a sample
  'dutyIn0', 'dutyIn1', // duty the board applied at this sample, in force until the next [-1..1]
] as const;

export type TickField = (typeof TICK_FIELDS)[number];

/** Width of a row. */
export const TICK_WIDTH = TICK_FIELDS.length;

/** Offset of each field in a row. */
export const F = Object.fromEntries(TICK_FIELDS.map((f, i) => [f, i])) as Record<TickField, number>;

/** Loop states, with their codes in the row. */
export const LOOP_STATES = ['idle', 'hold', 'track', 'paused', 'release', 'stopped', 'estop', 'fault', 'disabled'] as const;
export type LoopState = (typeof LOOP_STATES)[number];

/** Phases of a run's trajectory: the approach from where the arm is, the trajectory, the way back. */
export const PHASES = ['none', 'approach', 'track', 'park'] as const;
export type TrajPhase = (typeof PHASES)[number];

/** A row as an object with arrays (for the recorder and tests). */
export interface TickObject {
  t: number;
  i: number;
  state: LoopState;
  trajT: number;
  phase: TrajPhase;
  des: { q: number[]; qd: number[]; qdd: number[] };
  meas: { q: number[]; qd: number[] };
  twin: { q: number[]; qd: number[]; res: number[]; tauExt: number[] };
  tau: { ff: number[]; pid: number[]; cmd: number[] };
  duty: number[];
  timing: { errUs: number; execUs: number; overruns: number; missed: number };
  link: { sent: number; received: number; lost: number; corrupt: number };
  alarm: number;
  flags: number;
  boardT: number;
  fresh: number;
  sat: number;
  /** The board's sample index (-1: a row without a sample); absent in recordings made before it existed. */
  sample?: number;
  /** Duty the board applied at this sample, in force until the next. */
  dutyIn?: number[];
}

/** Converts a row to an object; `joints` trims the joint arrays. */
export function tickObject(r: ArrayLike<number>, joints: number): TickObject {
  const pair = (a: TickField, b: TickField): number[] => (joints === 1 ? [r[F[a]]!] : [r[F[a]]!, r[F[b]]!]);
  return {
    t: r[F.t]!,
    i: r[F.i]!,
    state: LOOP_STATES[r[F.state]!] ?? 'idle',
    trajT: r[F.trajT]!,
    phase: PHASES[r[F.phase]!] ?? 'none',
    des: { q: pair('qDes0', 'qDes1'), qd: pair('qdDes0', 'qdDes1'), qdd: pair('qddDes0', 'qddDes1') },
    meas: { q: pair('q0', 'q1'), qd: pair('qd0', 'qd1') },
    twin: { q: pair('twinQ0', 'twinQ1'), qd: pair('twinQd0', 'twinQd1'), res: pair('res0', 'res1'), tauExt: pair('tauExt0', 'tauExt1') },
    tau: { ff: pair('tauFf0', 'tauFf1'), pid: pair('tauPid0', 'tauPid1'), cmd: pair('tauCmd0', 'tauCmd1') },
    duty: pair('duty0', 'duty1'),
    timing: { errUs: r[F.errUs]!, execUs: r[F.execUs]!, overruns: r[F.overruns]!, missed: r[F.missed]! },
    link: { sent: r[F.sent]!, received: r[F.received]!, lost: r[F.lost]!, corrupt: r[F.corrupt]! },
    alarm: r[F.alarm]!,
    flags: r[F.flags]!,
    boardT: r[F.boardT]!,
    fresh: r[F.fresh]!,
    sat: r[F.sat]!,
    sample: r[F.sample]!,
    dutyIn: pair('dutyIn0', 'dutyIn1'),
  };
}
