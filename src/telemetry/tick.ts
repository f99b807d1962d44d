/**
 * The tick format, declared once. One tick of the loop is a flat row of numbers (what the worker hands
 * to the main thread through shared memory without serialising it); the recording writes it as an
 * NDJSON object with nested groups and per-joint arrays; CSV and MCAP exports and the recording reader
 * read it back. Every one of those views is generated from `TICK_TABLE` below: adding a field is one
 * entry there. The row layout, the NDJSON keys and their order, and the CSV columns follow the
 * table's order.
 */

/** Loop states, with their codes in the row. */
export const LOOP_STATES = ['idle', 'hold', 'track', 'paused', 'release', 'stopped', 'estop', 'fault', 'disabled'] as const;
export type LoopState = (typeof LOOP_STATES)[number];

/** Phases of a run's trajectory: the approach from where the arm is, the trajectory, the way back. */
export const PHASES = ['none', 'approach', 'track', 'park'] as const;
export type TrajPhase = (typeof PHASES)[number];

/** Slots per joint array in a row (joint 2 is 0 for a one-link arm). */
export const ROW_JOINTS = 2;

/** One field of the tick. */
export interface TickFieldSpec {
  /** Key in the NDJSON object (inside `group` when there is one). */
  readonly name: string;
  /** Name in the flat row; a per-joint field takes slots `${row}0`, `${row}1`. */
  readonly row: string;
  /** Nested object of the NDJSON line it sits in. */
  readonly group?: TickGroup;
  /** One value per joint. */
  readonly joints?: true;
  /** Physical unit ('' for counts, codes and dimensionless values). */
  readonly unit: '' | 's' | 'us' | 'rad' | 'rad/s' | 'rad/s^2' | 'N m' | 'N';
  /** Words for the codes the row holds (the NDJSON line has the word). */
  readonly codes?: readonly string[];
  /** CSV column stem when it is not `name` (the group and the unit are added). */
  readonly csv?: string;
  /**
   * Added after recordings existed: optional on read, and what the row holds when it is absent
   * (a number, or a copy of another per-joint field's NDJSON value).
   */
  readonly absent?: number | { copy: string };
  readonly description: string;
}

/** Groups of the NDJSON tick line, with what each holds. */
export const TICK_GROUPS = {
  des: 'the plan at the moment of the reading',
  meas: 'the measurement',
  twin: 'the simulated twin',
  tau: 'joint torques',
  timing: "the loop's timing",
  link: 'link counters so far',
  plant: 'the simulated arm (the mock rig in virtual time only)',
} as const;
export type TickGroup = keyof typeof TICK_GROUPS;

/** The tick, field by field, in row and NDJSON order. */
export const TICK_TABLE = [
  { name: 't', row: 't', unit: 's', description: "loop time since the run started (the board's clock)" },
  { name: 'i', row: 'i', unit: '', description: 'row index (0, 1, 2, ...: one row per sample, and one for a halt between samples)' },
  { name: 'state', row: 'state', unit: '', codes: LOOP_STATES, description: 'loop state' },
  { name: 'trajT', row: 'trajT', unit: 's', description: 'time on the trajectory, -1 if none' },
  { name: 'phase', row: 'phase', unit: '', codes: PHASES, description: 'phase of the trajectory' },
  { group: 'des', name: 'q', row: 'qDes', joints: true, unit: 'rad', description: 'desired angles' },
  { group: 'des', name: 'qd', row: 'qdDes', joints: true, unit: 'rad/s', description: 'desired velocities' },
  { group: 'des', name: 'qdd', row: 'qddDes', joints: true, unit: 'rad/s^2', description: 'desired accelerations' },
  { group: 'meas', name: 'q', row: 'q', joints: true, unit: 'rad', description: 'measured angles' },
  { group: 'meas', name: 'qd', row: 'qd', joints: true, unit: 'rad/s', description: 'estimated velocities' },
  { group: 'twin', name: 'q', row: 'twinQ', joints: true, unit: 'rad', description: 'twin angles' },
  { group: 'twin', name: 'qd', row: 'twinQd', joints: true, unit: 'rad/s', description: 'twin velocities' },
  { group: 'twin', name: 'res', row: 'res', joints: true, unit: 'rad', description: 'residual: measured - twin' },
  { group: 'twin', name: 'tauExt', row: 'tauExt', joints: true, unit: 'N m', description: "the momentum observer's unexplained torque" },
  { group: 'tau', name: 'ff', row: 'tauFf', joints: true, unit: 'N m', description: 'feedforward' },
  { group: 'tau', name: 'pid', row: 'tauPid', joints: true, unit: 'N m', description: 'PID' },
  { group: 'tau', name: 'cmd', row: 'tauCmd', joints: true, unit: 'N m', description: 'commanded, after saturation and ramps' },
  { name: 'duty', row: 'duty', joints: true, unit: '', description: 'motor duty -1..1' },
  {
    group: 'timing',
    name: 'errUs',
    row: 'errUs',
    unit: 'us',
    csv: 'err',
    description: "latency: the board's sample instant (on the host's clock) to the answer written",
  },
  { group: 'timing', name: 'execUs', row: 'execUs', unit: 'us', csv: 'exec', description: "time the sample's work took" },
  {
    group: 'timing',
    name: 'overruns',
    row: 'overruns',
    unit: '',
    description:
      "late samples so far: the host missed the answer's deadline (written more than a sample period after the sample arrived, or never: the host read the sample late, beyond the link's usual burst)",
  },
  {
    group: 'timing',
    name: 'missed',
    row: 'missed',
    unit: '',
    description: "samples lost on the way (gaps in the board's sample index), so far",
  },
  { group: 'link', name: 'sent', row: 'sent', unit: '', description: 'frames sent' },
  { group: 'link', name: 'received', row: 'received', unit: '', description: 'frames received' },
  { group: 'link', name: 'lost', row: 'lost', unit: '', description: 'frames lost' },
  { group: 'link', name: 'corrupt', row: 'corrupt', unit: '', description: 'frames corrupt' },
  { name: 'alarm', row: 'alarm', unit: '', description: 'twin alarm bits (bit i = joint i+1)' },
  { name: 'flags', row: 'flags', unit: '', description: 'board flags' },
  { name: 'boardT', row: 'boardT', unit: 's', description: 'board time of the reading' },
  { name: 'fresh', row: 'fresh', unit: '', description: '1 if a new reading arrived this tick' },
  { name: 'sat', row: 'sat', unit: '', description: 'saturation bits (bit i = joint i+1 torque or duty limited)' },
  { name: 'sample', row: 'sample', unit: '', absent: -1, description: "the board's sample index, -1 for a row without a sample" },
  // Older recordings (the sync protocol): the duty sent at a tick applied right away.
  {
    name: 'dutyIn',
    row: 'dutyIn',
    joints: true,
    unit: '',
    csv: 'duty_in',
    absent: { copy: 'duty' },
    description: 'duty the board applied at this sample, in force until the next -1..1',
  },
  // Impedance mode (issue 23): zero under other laws.
  {
    name: 'fEst',
    row: 'fEst',
    joints: true,
    unit: 'N',
    csv: 'f_est',
    absent: 0,
    description: "contact force at the endpoint (x, y) from the twin's momentum observer, J^-T tauExt, tared at rest (impedance mode)",
  },
  {
    name: 'stiffness',
    row: 'stiffness',
    unit: '',
    absent: 0,
    description: 'stiffness in force [N/m at the endpoint, N m/rad in joint space] (impedance mode)',
  },
  // Float mode (issue 23): zero under other laws.
  {
    name: 'float',
    row: 'float',
    unit: '',
    absent: 0,
    description: "float mode's blend weight: 0 tracking or holding, 1 floating, between while entering or leaving (float mode)",
  },
  // The mock's truth (issue 33): the encoders sit on the motor side, before the gearbox's play.
  {
    group: 'plant',
    name: 'known',
    row: 'plantKnown',
    unit: '',
    absent: 0,
    description: '1 when plant.q holds the simulated arm (a virtual run on the mock rig), 0 otherwise (a real arm: unknown)',
  },
  {
    group: 'plant',
    name: 'q',
    row: 'plantQ',
    joints: true,
    unit: 'rad',
    absent: 0,
    description: "the simulated link's true angles when the board read the encoders (0 when plant.known is 0)",
  },
  // Issue 35: samples a USB adapter delivered together with a newer one, apart from the late ones.
  {
    group: 'timing',
    name: 'burst',
    row: 'burst',
    unit: '',
    absent: 0,
    description:
      "samples so far that came in one burst of the link with a newer one (a USB adapter's: a 16U2 every 4.096 ms) and were not answered, only the newest of a burst is: not late",
  },
  // Issue 33: a second sensor on the link side (firmata.linkSensors: a potentiometer on the joint, after the gearbox). A measurement, unlike plant.q.
  {
    group: 'meas',
    name: 'linkKnown',
    row: 'linkKnown',
    unit: '',
    absent: 0,
    description:
      "bit j set when meas.qLink[j] holds joint j+1's link-side sensor reading (a potentiometer after the gearbox, firmata.linkSensors), 0 without one",
  },
  {
    group: 'meas',
    name: 'qLink',
    row: 'qLink',
    joints: true,
    unit: 'rad',
    absent: 0,
    description:
      "link-side angles from a sensor on the joint, after the gearbox, in the same sample as meas.q (0 where meas.linkKnown's bit is clear)",
  },
] as const satisfies readonly TickFieldSpec[];

type Spec = (typeof TICK_TABLE)[number];
type RowNames<S> = S extends { row: infer R extends string; joints: true }
  ? `${R}0` | `${R}1`
  : S extends { row: infer R extends string }
    ? R
    : never;

/** Name of one slot of the row (a per-joint field has one per joint: `q0`, `q1`). */
export type TickField = RowNames<Spec>;

/** Slot names of the row, in order. */
export const TICK_FIELDS: readonly TickField[] = TICK_TABLE.flatMap((s) =>
  'joints' in s ? Array.from({ length: ROW_JOINTS }, (_, j) => `${s.row}${j}`) : [s.row],
) as TickField[];

/** Width of a row. */
export const TICK_WIDTH = TICK_FIELDS.length;

/** Offset of each slot in a row. */
export const F = Object.fromEntries(TICK_FIELDS.map((f, i) => [f, i])) as Record<TickField, number>;

type Value<S> = S extends { codes: readonly (infer C)[] } ? C : S extends { joints: true } ? number[] : number;
type Fields<Of> = {
  [S in Of as S extends { absent: unknown } ? never : S extends { name: infer N extends string } ? N : never]: Value<S>;
} & {
  [S in Of as S extends { absent: unknown } ? (S extends { name: infer N extends string } ? N : never) : never]?: Value<S>;
};
type Grouped = { [G in TickGroup]: Fields<Extract<Spec, { group: G }>> };

/**
 * A row as an object with per-joint arrays: the NDJSON tick line without its `kind`. Fields added
 * after recordings existed are optional (absent in older recordings); `tickObject` always sets them.
 */
export type TickObject = Fields<Exclude<Spec, { group: string }>> & Grouped;

/** The table with the row offsets worked out, for the generated views. */
interface Slot {
  readonly spec: TickFieldSpec;
  readonly at: number;
}
const SLOTS: readonly Slot[] = TICK_TABLE.map((spec) => ({ spec, at: F[('joints' in spec ? `${spec.row}0` : spec.row) as TickField] }));

/**
 * Converts a row to an object; `joints` trims the joint arrays. The recorder calls it on every tick,
 * so it is compiled from the table once into one object literal (as a hand-written one would be):
 * V8 then builds every tick's object with one shape, and JSON.stringify is as fast as before the
 * table (a generic loop cost about 20% more per tick, real time).
 */
export const tickObject: (r: ArrayLike<number>, joints: number) => TickObject = compileTickObject();

function compileTickObject(): (r: ArrayLike<number>, joints: number) => TickObject {
  const codes: (readonly string[])[] = [];
  const value = ({ spec, at }: Slot): string => {
    if (spec.joints) return `(joints === 1 ? [r[${at}]] : [r[${at}], r[${at + 1}]])`;
    if (spec.codes) return `(codes[${codes.push(spec.codes) - 1}][r[${at}]] ?? codes[${codes.length - 1}][0])`;
    return `r[${at}]`;
  };
  const entry = (slot: Slot): string => `${JSON.stringify(slot.spec.name)}: ${value(slot)}`;
  // Keys in the table's order, each group where its first field is.
  const top: string[] = [];
  for (const slot of SLOTS) {
    const g = slot.spec.group;
    if (!g) top.push(entry(slot));
    else if (SLOTS.find((x) => x.spec.group === g) === slot)
      top.push(
        `${g}: { ${SLOTS.filter((x) => x.spec.group === g)
          .map(entry)
          .join(', ')} }`,
      );
  }
  const compile = new Function('codes', `return (r, joints) => ({ ${top.join(', ')} });`) as (
    codes: (readonly string[])[],
  ) => (r: ArrayLike<number>, joints: number) => TickObject;
  return compile(codes);
}

/**
 * `JSON.stringify(tickObject(r, joints))` written straight from the row, without the object: compiled
 * from the table once like `tickObject`. The live view and the MCAP writer send a tick as JSON at up
 * to 1 kHz; tests/tick-table.test.ts checks the text against JSON.stringify at random rows (NaN and
 * infinities are null, as JSON has them).
 */
export const tickJson: (r: ArrayLike<number>, joints: number) => string = compileTickJson();

function compileTickJson(): (r: ArrayLike<number>, joints: number) => string {
  const codes: string[][] = [];
  const value = ({ spec, at }: Slot): string => {
    if (spec.joints) return `"[" + n(r[${at}]) + (joints === 1 ? "]" : "," + n(r[${at + 1}]) + "]")`;
    if (spec.codes) {
      const c = codes.push(spec.codes.map((w) => JSON.stringify(w))) - 1;
      return `(codes[${c}][r[${at}]] ?? codes[${c}][0])`;
    }
    return `n(r[${at}])`;
  };
  const parts: string[] = [];
  const key = (name: string): string => JSON.stringify(`${JSON.stringify(name)}:`);
  let first = true;
  const sep = (): string => (first ? ((first = false), '') : ',');
  for (const slot of SLOTS) {
    const g = slot.spec.group;
    if (!g) parts.push(`${JSON.stringify(sep())} + ${key(slot.spec.name)} + ${value(slot)}`);
    else if (SLOTS.find((x) => x.spec.group === g) === slot) {
      const inner = SLOTS.filter((x) => x.spec.group === g).map(
        (x, i) => `${JSON.stringify(i ? ',' : '')} + ${key(x.spec.name)} + ${value(x)}`,
      );
      parts.push(`${JSON.stringify(sep())} + ${key(g)} + "{" + ${inner.join(' + ')} + "}"`);
    }
  }
  const n = (x: number | undefined): string => (x !== undefined && Number.isFinite(x) ? String(x) : 'null');
  const compile = new Function('codes', 'n', `return (r, joints) => "{" + ${parts.join(' + ')} + "}";`) as (
    codes: string[][],
    n: (x: number | undefined) => string,
  ) => (r: ArrayLike<number>, joints: number) => string;
  return compile(codes, n);
}

/**
 * Writes a tick object (a validated NDJSON line) into a flat row: the inverse of `tickObject`.
 * Fields absent from older recordings get the table's `absent` value; a word that is not one of a
 * field's codes is -1 (the reader's schema refuses such lines first).
 */
export function tickRow(o: Readonly<Record<string, unknown>>, row: Float64Array): void {
  const value = (s: TickFieldSpec): unknown => (s.group ? (o[s.group] as Record<string, unknown> | undefined)?.[s.name] : o[s.name]);
  for (const { spec, at } of SLOTS) {
    let v = value(spec);
    if (v === undefined && spec.absent !== undefined) {
      const a = spec.absent;
      v = typeof a === 'number' ? a : value(TICK_TABLE.find((s) => s.name === a.copy && !('group' in s))!);
    }
    if (spec.joints) {
      const a = typeof v === 'number' ? [v, v] : (v as readonly number[]);
      row[at] = a[0]!;
      row[at + 1] = a.length > 1 ? a[1]! : 0;
    } else if (spec.codes) row[at] = spec.codes.indexOf(v as string);
    else row[at] = v as number;
  }
}
