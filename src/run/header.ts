/**
 * The header line of a run's recording, built in one place for the threaded run (session.ts, the
 * --record file and the dashboard's) and the virtual one (virtual.ts). Its schema is
 * telemetry/header.ts, which the recorder checks it against and record/read.ts reads it with.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from '../control/controller.js';
import type { FloatSettings } from '../control/float.js';
import type { ImpedanceSettings } from '../control/impedance.js';
import type { Injection } from '../mock/injections.js';
import type { PathSpec } from '../model/builtins.js';
import type { RecordingHeader, RunLaw } from '../telemetry/header.js';
import { PROTOCOL_VERSION, VERSION } from '../version.js';
import type { Target } from './target.js';

export interface HeaderParts {
  rig: Rig;
  rateHz: number;
  feedforward: FeedforwardMode;
  target: Target;
  /** Virtual time (run/virtual.ts); real time has no `clock` field, as recordings before it. */
  clock?: 'virtual';
  paths: readonly PathSpec[];
  injections: readonly Injection[];
  /** Who started it, when not --record. */
  startedBy?: string;
  /** The law, when not feedforward + PID: a user's controller module (its file) or a ControlLaw given in code (its class name)... */
  controller?: string | { code: string };
  /** ... impedance mode's spring ... */
  impedance?: ImpedanceSettings;
  /** ... or float mode's settings. */
  float?: FloatSettings;
  /** Feedforward + PID's delay compensation. @default true */
  predict?: boolean;
}

/** The SHA-256 of a file, in hex (the controller module the run loaded). */
function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * The run's control law as its header records it (telemetry/header.ts RunLaw): which law and the
 * settings it ran with, so that `compare` labels each run by what drove the arm.
 */
export function runLaw(o: Pick<HeaderParts, 'rig' | 'feedforward' | 'controller' | 'impedance' | 'float' | 'predict'>): RunLaw {
  if (typeof o.controller === 'string') return { kind: 'controller', file: o.controller, sha256: sha256Of(o.controller) };
  if (o.controller) return { kind: 'code', name: o.controller.code };
  if (o.impedance)
    return { kind: 'impedance', space: o.impedance.space, stiffness: o.impedance.stiffness, dampingRatio: o.impedance.dampingRatio };
  if (o.float) return { kind: 'float', settings: { ...o.float } };
  const c = o.rig.control;
  const { kp, ki, kd, iLimitNm, antiWindup, schedule } = c.pid;
  return {
    kind: 'pid',
    feedforward: o.feedforward,
    disturbanceObserver: c.disturbanceObserver,
    predict: o.predict ?? true,
    pid: { kp, ki, kd, iLimitNm, antiWindup, ...(schedule ? { schedule } : {}) },
  };
}

export function runHeader(o: HeaderParts): RecordingHeader {
  return {
    kind: 'header',
    twolink: VERSION,
    protocol: PROTOCOL_VERSION,
    startedAt: new Date().toISOString(),
    joints: o.rig.joints,
    rateHz: o.rateHz,
    feedforward: o.feedforward,
    target: o.target,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.startedBy ? { startedBy: o.startedBy } : {}),
    rig: { file: o.rig.file, name: o.rig.name, content: o.rig.source },
    trajectories: o.paths,
    injections: o.injections,
    law: runLaw(o),
  };
}
