/**
 * Why a run stopped, as values of a closed type (not strings tested by prefix). `describeStop` gives
 * the one-line text that the summary, the recording and the exit code use: "done", "quit",
 * "interrupted:SIGINT", "estop", "timeout: ...", "fault:link-lost (...)".
 */

/** A safety stop: what the loop saw that made it zero the motors. */
export type Fault =
  | { kind: 'link-lost'; ms: number; samples: number }
  | { kind: 'link-closed' }
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
  /** A fault reported from outside the loop (a full disk, a lifecycle command that failed). */
  | { kind: 'host'; message: string };

/** What a joint's motion says is wrong with it (the wiring monitor's diagnoses that are not wiring). */
export type JointTrouble = 'dead-motor' | 'jammed' | 'stuck';

const TROUBLE: Record<JointTrouble, (j: number) => string> = {
  'dead-motor': (j) => `motor ${j} gives no torque (a broken motor wire, a blown driver channel, a stripped gearbox)`,
  jammed: (j) => `joint ${j} does not move under full torque (jammed or blocked)`,
  stuck: (j) => `joint ${j} does not move under its motor's torque (its motor gives no torque, or it is jammed)`,
};

export type StopReason =
  | { kind: 'done' }
  /** A stop asked for from outside (quit, a signal, the end of a recording): its text. */
  | { kind: 'requested'; text: string }
  | { kind: 'estop'; text: string }
  /** The run's time limit (--max-seconds, a HIL scenario's maxSeconds) came before its trajectories were done. */
  | { kind: 'timeout'; seconds: number }
  | { kind: 'fault'; fault: Fault };

const joints = (js: number[]): string => (js.length === 1 ? `joint ${js[0]! + 1}` : `joints ${js.map((j) => j + 1).join(' and ')}`);

/** The fault's text after "fault:". */
export function describeFault(f: Fault): string {
  switch (f.kind) {
    case 'link-lost':
      return `link-lost (no telemetry for ${f.samples} samples, ${f.ms.toFixed(0)} ms)`;
    case 'link-closed':
      return 'link-closed';
    case 'board-reset':
      return 'board-reset';
    case 'watchdog':
      return 'watchdog';
    case 'limit':
      return `limit joint ${f.joint + 1} at ${f.deg.toFixed(1)} deg, outside ${f.minDeg.toFixed(0)}..${f.maxDeg.toFixed(0)} deg`;
    case 'speed':
      return `speed joint ${f.joint + 1} at ${f.degS.toFixed(0)} deg/s, limit ${f.limitDegS.toFixed(0)} deg/s`;
    case 'encoder-jump':
      return `encoder-jump joint ${f.joint + 1}: its angle stepped ${f.deg.toFixed(1)} deg in ${f.ms.toFixed(1)} ms, faster than the joint can turn (a slipping encoder or coupling, a miscount, noise on the encoder lines)`;
    case 'encoder-slip':
      return `encoder-slip joint ${f.joint + 1}: its angle stepped back against the motion ${f.steps} times in ${f.seconds.toFixed(2)} s (${Math.abs(f.deg).toFixed(1)} deg lost), each faster than the joint can change speed: its encoder slips (a loose coupling or set screw) or misses counts (noise on its lines), and the arm is further along than measured`;
    case 'saturated':
      return `saturated joint ${f.joint + 1} at its torque limit for ${f.seconds} s (jammed, blocked, or a load it cannot carry)`;
    case 'non-finite':
      return `non-finite ${f.what} (the motors were zeroed)`;
    case 'twin-alarm':
      return `twin-alarm ${joints(f.joints)} ${f.joints.length === 1 ? 'diverges' : 'diverge'} from the model (a collision, a jam, a load?)`;
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
    case 'host':
      return f.message;
  }
}

export function describeStop(r: StopReason): string {
  switch (r.kind) {
    case 'done':
      return 'done';
    case 'requested':
      return r.text;
    case 'estop':
      return r.text;
    case 'timeout':
      return `timeout: the run's time limit of ${r.seconds} s came before its trajectories were done`;
    case 'fault':
      return `fault:${describeFault(r.fault)}`;
  }
}

/** A stop reason from the text of a stop or e-stop command ("fault:..." texts are host faults). */
export function stopFromText(kind: 'stop' | 'estop', text: string): StopReason {
  if (text.startsWith('fault:')) return { kind: 'fault', fault: { kind: 'host', message: text.slice(6) } };
  if (text === 'done') return { kind: 'done' };
  const timeout = /^timeout: the run's time limit of (\S+) s/.exec(text);
  if (timeout && Number.isFinite(Number(timeout[1]))) return { kind: 'timeout', seconds: Number(timeout[1]) };
  return kind === 'estop' ? { kind: 'estop', text } : { kind: 'requested', text };
}
