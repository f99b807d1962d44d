/**
 * `twolink/testing`: run the real loop against the mock rig in virtual time from your own tests
 * (vitest, node:test, ...), with your controller, and get the summary and every tick.
 *
 *   import { virtualRun, mockRig } from 'twolink/testing';
 *   const run = await virtualRun({ rig: mockRig(), traj: 'reach', controller: './my-controller.js' });
 *   assert.equal(run.summary.stop.kind, 'done'); // or e.g. stop.kind === 'fault' && stop.fault.kind === 'link-lost'
 *   assert.ok(run.summary.tracking.rmsDeg.every((e) => e < 1));
 */
import { fileURLToPath } from 'node:url';
import { loadRig, type Rig } from './config/load.js';
import { loadTrajectoryFile } from './config/trajectory-file.js';
import { RigFileError } from './config/rig.js';
import type { FeedforwardMode } from './control/controller.js';
import { formatInjection, injectionSchema, parseInjection, type Injection } from './mock/injections.js';
import type { LoopEvent } from './control/loop.js';
import { tickObject, type TickObject } from './telemetry/tick.js';
import { builtinNames, builtinPath, type PathSpec } from './model/builtins.js';
import type { RunSummary } from './run/stats.js';
import { parseWiring } from './mock/wiring.js';
import { virtualRun as runVirtual } from './run/virtual.js';

export type { ControllerContext, ControllerFactory, ControllerModel, ControllerSample, UserController } from './control/user-controller.js';
export type { Injection, LoopEvent, PathSpec, Rig, RunSummary, TickObject };
export type { Fault, StopReason } from './control/stop.js';
export { describeStop, isStopOf } from './control/stop.js';

/** @deprecated The old name of {@link Injection} (its `kind` is now `name`). */
export type FaultSpec = Injection;

/** The rig file of the built-in mock arm that ships with twolink. */
export const MOCK_RIG_FILE = fileURLToPath(new URL('../rigs/mock-arm.json', import.meta.url));

/**
 * A rig with a simulated plant: `file` (default: the built-in mock arm, rigs/mock-arm.json of the
 * package). Throws RigFileError naming the file if it is invalid or has no "plant" section.
 */
export function mockRig(file: string = MOCK_RIG_FILE): Rig {
  const rig = loadRig(file);
  if (!rig.plant)
    throw new RigFileError(file, 'no "plant" section: the mock rig needs the true arm to simulate (start from rigs/mock-arm.json)');
  return rig;
}

/** Options of {@link virtualRun}. */
export interface TestRunOptions {
  /** The rig, or its file. @default mockRig() */
  rig?: Rig | string;
  /** Built-in trajectory names (reach, point, circle), trajectory files (.json) or specs, run in order. @default 'reach' */
  traj?: string | PathSpec | (string | PathSpec)[];
  /** Your controller module (ESM, default export createController(context)), in place of feedforward + PID. */
  controller?: string;
  /** twolink's own law's feedforward (without a controller). @default the rig file's */
  feedforward?: FeedforwardMode;
  /** Loop rate [Hz]. @default the rig file's */
  rateHz?: number;
  /** Test knobs injected into the mock, as for --inject: `'payload=0.25@2.2'`, or parsed. */
  injections?: (string | Injection)[];
  /** @deprecated The old name of `injections`. */
  faults?: (string | Injection)[];
  /** A miswired mock, as for --wiring: `'reverse-encoder=1'`. */
  wiring?: string;
  /** Longest run [s, virtual time]. @default 600 */
  maxSeconds?: number;
  /** Also write an NDJSON recording here (what `twolink compare` reads). */
  record?: string;
}

/** What a run gives back. */
export interface TestRun {
  /** The --json summary: stop reason, tracking and twin errors, alarms, link counters. */
  summary: RunSummary;
  /** Every tick as an object (time, desired, measured, twin, torques, duties, ...). */
  ticks: TickObject[];
  /** State changes, trajectory phases, alarms, link events, with their loop times [s]. */
  events: LoopEvent[];
}

function pathOf(rig: Rig, t: string | PathSpec): PathSpec {
  if (typeof t !== 'string') return t;
  const b = builtinPath(rig.arm, t);
  if (b) return b;
  if (t.endsWith('.json')) return loadTrajectoryFile(t);
  throw new TypeError(`traj "${t}": not a built-in trajectory of this arm (${builtinNames(rig.arm).join(', ')}) nor a .json file`);
}

/** Runs trajectories on the mock rig in virtual time (deterministic; much faster than real time). */
export async function virtualRun(options: TestRunOptions = {}): Promise<TestRun> {
  const rig = typeof options.rig === 'string' ? mockRig(options.rig) : (options.rig ?? mockRig());
  const trajs = options.traj === undefined ? ['reach'] : Array.isArray(options.traj) ? options.traj : [options.traj];
  const paths = trajs.map((t) => pathOf(rig, t));
  // Parsed ones are checked as text would be (they come from the caller's code).
  const injections = [...(options.injections ?? []), ...(options.faults ?? [])].map((i) =>
    parseInjection(typeof i === 'string' ? i : formatInjection(injectionSchema.parse(i)), rig.joints),
  );
  const r = await runVirtual(rig, paths, {
    ...(options.feedforward !== undefined ? { feedforward: options.feedforward } : {}),
    ...(options.rateHz !== undefined ? { rateHz: options.rateHz } : {}),
    ...(options.maxSeconds !== undefined ? { maxSeconds: options.maxSeconds } : {}),
    ...(options.record !== undefined ? { record: options.record } : {}),
    ...(options.controller !== undefined ? { controller: options.controller } : {}),
    ...(injections.length ? { injections } : {}),
    ...(options.wiring !== undefined ? { wiring: parseWiring(options.wiring, rig.joints) } : {}),
  });
  return { summary: r.summary, ticks: r.rows.map((row) => tickObject(row, rig.joints)), events: r.events };
}
