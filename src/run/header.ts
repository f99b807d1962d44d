/**
 * The header line of a run's recording, built in one place for the threaded run (session.ts, the
 * --record file and the dashboard's) and the virtual one (virtual.ts). Its schema is
 * telemetry/header.ts, which the recorder checks it against and record/read.ts reads it with.
 */
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from '../control/controller.js';
import type { Injection } from '../mock/injections.js';
import type { PathSpec } from '../model/builtins.js';
import type { RecordingHeader } from '../telemetry/header.js';
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
  };
}
