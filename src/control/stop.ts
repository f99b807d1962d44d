/**
 * Why a run stopped, as values of a closed type (not strings tested by prefix). The value crosses the
 * loop's thread, the session, the events and the summary; the exit code, the dashboard, HIL, setup,
 * identify and the bench switch on its kind. `describeStop` gives the one line of text for people
 * (the summary's `stopReason` beside its `stop`): "done", "quit", "interrupted:SIGINT", "estop",
 * "timeout: ...", "fault:link-lost (...)". Nothing parses that text back.
 */

import { beyondText, boundText, outsideText } from '../model/beyond.js';

/** A safety stop: what the loop saw that made it zero the motors. */
export type Fault =
  | { kind: 'link-lost'; ms: number; samples: number }
  | { kind: 'link-closed' }
  /**
   * The port vanished mid-run (a USB cable pulled, the board unpowered): its read or write failed with
   * `code` (EIO, ENXIO, ENODEV: transport/cable.ts), `message` the error's words, `port` its path.
   */
  | { kind: 'cable'; port: string; code: string; message: string }
  | { kind: 'board-reset' }
  | { kind: 'watchdog' }
  | { kind: 'limit'; joint: number; deg: number; minDeg: number; maxDeg: number }
  | { kind: 'speed'; joint: number; degS: number; limitDegS: number }
  /** A measured angle that stepped by `deg` in `ms`, faster than the joint can turn: the encoder jumped. */
  | { kind: 'encoder-jump'; joint: number; deg: number; ms: number }
  /** A measured angle that stepped back against the motion `steps` times in `seconds`, losing `deg` in all (slip.ts): the encoder slips. */
  | { kind: 'encoder-slip'; joint: number; steps: number; deg: number; seconds: number }
  | { kind: 'saturated'; joint: number; seconds: number }
  | { kind: 'non-finite'; what: string }
  | { kind: 'twin-alarm'; joints: number[] }
  | { kind: 'stall'; ms: number; watchdogMs: number; boardWatchdog: boolean }
  | { kind: 'wiring'; joint: number; message: string }
  /**
   * A joint further from its plan than its following-error limit, at loop time `t` [s]; `cause`: what
   * the motion says the joint's trouble is (wiring-monitor.ts), when it is clear.
   */
  | { kind: 'following-error'; joint: number; errorDeg: number; limitDeg: number; t: number; cause?: JointTrouble }
  | { kind: 'controller'; message: string }
  /** A trajectory the rig cannot follow from where the arm really is, refused as it was to start. */
  | { kind: 'infeasible'; message: string }
  /** A fault reported from outside the loop (a lifecycle command that failed, the loop's thread gone). */
  | { kind: 'host'; message: string }
  /** The run's recording could not be written (a full disk, a lost drive): the arm stops rather than run unrecorded. */
  | { kind: 'recording'; file: string; message: string }
  /**
   * A bug of twolink's own: an exception or a promise rejection nobody caught, in `where` (the main
   * thread and the part that threw when known, the loop thread). The motors were zeroed before the run
   * ended (docs/safety.md).
   */
  | { kind: 'internal'; where: string; message: string };

/** What a joint's motion says is wrong with it (the wiring monitor's diagnoses that are not wiring). */
export type JointTrouble = 'dead-motor' | 'jammed' | 'stuck' | 'back-driven';

const TROUBLE: Record<JointTrouble, (j: number) => string> = {
  'dead-motor': (j) => `motor ${j} gives no torque (a broken motor wire, a blown driver channel, a stripped gearbox)`,
  jammed: (j) => `joint ${j} does not move under full torque (jammed or blocked)`,
  stuck: (j) => `joint ${j} does not move under its motor's torque (its motor gives no torque, or it is jammed)`,
  'back-driven': (j) =>
    `joint ${j} is driven backwards by the other joint's motion against its motor's torque (not jammed: its motor or driver is too weak for this motion; try a lower --speed)`,
};

/** Every kind of `Fault` (a record, so that the compiler says when one is missing). */
const FAULT_KIND_SET: Readonly<Record<Fault['kind'], true>> = {
  'link-lost': true,
  'link-closed': true,
  cable: true,
  'board-reset': true,
  watchdog: true,
  limit: true,
  speed: true,
  'encoder-jump': true,
  'encoder-slip': true,
  saturated: true,
  'non-finite': true,
  'twin-alarm': true,
  stall: true,
  wiring: true,
  'following-error': true,
  controller: true,
  infeasible: true,
  host: true,
  recording: true,
  internal: true,
};
export const FAULT_KINDS = Object.keys(FAULT_KIND_SET) as readonly Fault['kind'][];

/** How a run ended: the outcome proper. */
export type StopKind =
  | { kind: 'done' }
  /** The dashboard's q: a normal end, like `done`. */
  | { kind: 'quit' }
  /** A signal (Ctrl-C: SIGINT; SIGTERM, SIGHUP) asked for a soft stop. Text: `interrupted:SIGINT`. */
  | { kind: 'interrupted'; signal?: string }
  /** Another stop asked for from outside (the end of a live recording, a test): its words. */
  | { kind: 'requested'; text: string }
  /** An e-stop: the motors zeroed at once. `by`: the key, a second signal, the operator. Text: `estop`, `estop:key`. */
  | { kind: 'estop'; by?: string }
  /** The run's time limit (--max-seconds, a HIL scenario's maxSeconds) came before its trajectories were done. */
  | { kind: 'timeout'; seconds: number }
  | { kind: 'fault'; fault: Fault };

/** What the host learned about a stop after it happened (said after the outcome's text). */
export interface StopNotes {
  /**
   * The loop's thread did not answer the stop request (blocked by a bug): why, in words. The main
   * thread ended it; the board's watchdog stopped the motors.
   */
  threadCut?: string;
  /** The simulated board starved before this fault (a busy machine): the test rig's fault, not the host's [ms]. */
  rigStarved?: { maxMs: number; totalMs: number };
}

/** Why a run stopped: a value of a closed type, switched on by kind; `describeStop` gives its text. */
export type StopReason = StopKind & StopNotes;

const STOP_KIND_SET: Readonly<Record<StopKind['kind'], true>> = {
  done: true,
  quit: true,
  interrupted: true,
  requested: true,
  estop: true,
  timeout: true,
  fault: true,
};
export const STOP_KINDS = Object.keys(STOP_KIND_SET) as readonly StopKind['kind'][];

/** "joint 2", "joints 1 and 2": joints named from their 0-based indices. */
export const jointsText = (js: readonly number[]): string =>
  `${js.length === 1 ? 'joint' : 'joints'} ${js.map((j) => j + 1).join(' and ')}`;

/** The fault's text after "fault:". */
export function describeFault(f: Fault): string {
  switch (f.kind) {
    case 'link-lost':
      return `link-lost (no telemetry for ${f.samples} samples, ${f.ms.toFixed(0)} ms)`;
    case 'link-closed':
      return 'link-closed';
    case 'cable':
      return `cable: ${f.port} vanished (${f.message.includes(f.code) ? f.message : `${f.code}: ${f.message}`}): a USB cable pulled or the board unpowered? The motors' zero was sent where the board could still hear it; otherwise its watchdog stops them`;
    case 'board-reset':
      return 'board-reset';
    case 'watchdog':
      return 'watchdog';
    case 'limit': {
      const o = outsideText(f.deg, f.minDeg, f.maxDeg);
      return `limit joint ${f.joint + 1} at ${o.value} deg, outside ${o.range} deg`;
    }
    case 'speed':
      return `speed joint ${f.joint + 1} at ${beyondText(Math.abs(f.degS), f.limitDegS, 'above', 0)} deg/s, limit ${boundText(f.limitDegS)} deg/s`;
    case 'encoder-jump':
      return `encoder-jump joint ${f.joint + 1}: its angle stepped ${f.deg.toFixed(1)} deg in ${f.ms.toFixed(1)} ms, faster than the joint can turn (a slipping encoder or coupling, a miscount, noise on the encoder lines)`;
    case 'encoder-slip':
      return `encoder-slip joint ${f.joint + 1}: its angle stepped back against the motion ${f.steps} times in ${f.seconds.toFixed(2)} s (${Math.abs(f.deg).toFixed(1)} deg lost), each faster than the joint can change speed: its encoder slips (a loose coupling or set screw) or misses counts (noise on its lines), and the arm is further along than measured`;
    case 'saturated':
      return `saturated joint ${f.joint + 1} at its torque limit for ${f.seconds} s (jammed, blocked, or a load it cannot carry)`;
    case 'non-finite':
      return `non-finite ${f.what} (the motors were zeroed)`;
    case 'twin-alarm':
      return `twin-alarm ${jointsText(f.joints)} ${f.joints.length === 1 ? 'diverges' : 'diverge'} from the model (a collision, a jam, a load?)`;
    case 'stall':
      return f.boardWatchdog
        ? `stall: the host answered no sample for ${f.ms.toFixed(0)} ms, longer than the board's ${f.watchdogMs} ms watchdog`
        : `stall: the host answered no sample for ${f.ms.toFixed(0)} ms (over ${f.watchdogMs} ms); the board has no watchdog, so the arm ran uncommanded for ${f.ms.toFixed(0)} ms`;
    case 'wiring':
      return `wiring joint ${f.joint + 1}: ${f.message}`;
    case 'following-error':
      return `following-error joint ${f.joint + 1}: ${Math.abs(f.errorDeg).toFixed(1)} deg from its plan at ${f.t.toFixed(3)} s, limit ${f.limitDeg.toFixed(1)} deg${f.cause ? `: ${TROUBLE[f.cause](f.joint + 1)}` : ' (a load or a push it cannot hold, a sagging supply, a collision?)'}`;
    case 'controller':
      return `controller: ${f.message}`;
    case 'infeasible':
      return `infeasible: ${f.message} (refused before it started)`;
    case 'host':
      return f.message;
    case 'recording':
      return `recording ${f.message}`;
    case 'internal':
      return `internal: an error twolink did not catch, in ${f.where}: ${f.message} (a bug in twolink: the motors were zeroed and the run ended; please report it)`;
  }
}

function describeKind(r: StopKind): string {
  switch (r.kind) {
    case 'done':
      return 'done';
    case 'quit':
      return 'quit';
    case 'interrupted':
      return r.signal ? `interrupted:${r.signal}` : 'interrupted';
    case 'requested':
      return r.text;
    case 'estop':
      return r.by ? `estop:${r.by}` : 'estop';
    case 'timeout':
      return `timeout: the run's time limit of ${r.seconds} s came before its trajectories were done`;
    case 'fault':
      return `fault:${describeFault(r.fault)}`;
  }
}

/**
 * The one line of text for a stop, for people (the summary's `stopReason`, the console, the
 * dashboard, the HIL report): "done", "quit", "interrupted:SIGINT", "estop:key", "timeout: ...",
 * "fault:link-lost (...)". The only place where a `fault:` text is composed; nothing parses it back.
 */
export function describeStop(r: StopReason): string {
  const cut = r.threadCut ? ` (${r.threadCut}: twolink ended it from the main thread; the board's watchdog stops the motors)` : '';
  const starved = r.rigStarved
    ? ` (the simulated board starved for ${r.rigStarved.maxMs.toFixed(0)} ms, ${r.rigStarved.totalMs.toFixed(0)} ms in all: the test rig's fault, not the host's)`
    : '';
  return `${describeKind(r)}${cut}${starved}`;
}

/** A fault of the host (a full disk, a lifecycle command that failed, the loop's thread gone) as a stop. */
export function hostFault(message: string): StopReason {
  return { kind: 'fault', fault: { kind: 'host', message } };
}

/** A bug of twolink's own in `where` (an uncaught exception or rejection, `e`) as a stop. */
export function internalFault(where: string, e: unknown): StopReason {
  let message: string;
  try {
    message = e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e);
  } catch {
    message = 'a value that cannot be printed';
  }
  return { kind: 'fault', fault: { kind: 'internal', where, message: message.split('\n')[0]!.slice(0, 400) } };
}

/**
 * The stop's kind path: its kind, and a fault's kind after a dot: `done`, `estop`, `timeout`,
 * `fault.link-lost`, `fault.following-error`. What a HIL suite's `expect.stopReason` names.
 */
export function stopPath(r: StopReason): string {
  return r.kind === 'fault' ? `fault.${r.fault.kind}` : r.kind;
}

/** Every kind path there is: the stop kinds, `fault` and `fault.KIND` for each fault kind. */
export const STOP_PATHS: readonly string[] = [...STOP_KINDS, ...FAULT_KINDS.map((k) => `fault.${k}`)];

/** Whether `r` is of the kind `path` names: `fault` takes every fault, `fault.watchdog` one kind. */
export function isStopOf(r: StopReason, path: string): boolean {
  const p = stopPath(r);
  return p === path || p.startsWith(`${path}.`);
}

/** Whether `v` is a stop value (an AbortSignal's reason, say): an object whose `kind` is a stop kind. */
export function isStopReason(v: unknown): v is StopReason {
  if (typeof v !== 'object' || v === null) return false;
  const kind: unknown = (v as { kind?: unknown }).kind;
  return (
    typeof kind === 'string' &&
    (STOP_KINDS as readonly string[]).includes(kind) &&
    (kind !== 'fault' || typeof (v as { fault?: unknown }).fault === 'object')
  );
}
