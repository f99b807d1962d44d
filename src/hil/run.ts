/**
 * Runs a suite's scenarios one after the other on an engine (the mock rig in virtual time, or the pty
 * rig in real time) and checks each against its expectations. A scenario that cannot run is an
 * `error` result, never an exception: the other scenarios still run and the report says why.
 */
import type { LoopEvent } from '../control/loop.js';
import { ControllerFault } from '../control/user-controller.js';
import { RunStats, type RunSummary } from '../run/stats.js';
import { evaluate } from './expect.js';
import type { ScenarioResult, SuiteReport } from './report.js';
import type { Scenario, Suite } from './suite.js';

/** What an engine gives back for one scenario. */
export interface EngineResult {
  summary: RunSummary;
  events: LoopEvent[];
  /** How long after the first injection the arm was stopped [ms], `never`; absent without injections. */
  stopMs?: number | 'never';
}

/** Runs one scenario: resolves with the run's summary and events, rejects if it could not run. */
export type Engine = (scenario: Scenario) => Promise<EngineResult>;

/** Loop time of the first injection of a scenario [s]. */
export function firstInjectionAt(s: Scenario): number | undefined {
  return s.injections.length ? Math.min(...s.injections.map((i) => i.at)) : undefined;
}

/** Runs and checks one scenario. */
export async function runScenario(s: Scenario, engine: Engine): Promise<ScenarioResult> {
  const t0 = performance.now();
  const base = { index: s.index, name: s.name };
  try {
    const r = await engine(s).catch((e: unknown) => controllerFaulted(s, e));
    const figures = evaluate(s.expect, { summary: r.summary, ...(r.stopMs !== undefined ? { stopMs: r.stopMs } : {}) });
    return {
      ...base,
      status: figures.every((f) => f.pass) ? 'pass' : 'fail',
      figures,
      seconds: (performance.now() - t0) / 1000,
      loopSeconds: r.summary.ticks / r.summary.rateHz,
      summary: r.summary,
    };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { ...base, status: 'error', figures: [], seconds: (performance.now() - t0) / 1000, loopSeconds: 0, error: message };
  }
}

/** A controller that faulted before the loop ran (it hung or misbehaved while loading): a run of no tick that stopped for it. */
function controllerFaulted(s: Scenario, e: unknown): EngineResult {
  if (!(e instanceof ControllerFault)) throw e;
  return { summary: new RunStats(s.rig.joints, s.rateHz).summary(e.stop), events: [] };
}

/** Runs every scenario of `suite` (or those named in `only`) in order. */
export async function runSuite(
  suite: Suite,
  engine: Engine,
  opts: { clock: 'virtual' | 'real'; only?: readonly string[]; onResult?: (r: ScenarioResult, of: number) => void },
): Promise<SuiteReport> {
  const startedAt = new Date().toISOString();
  const chosen = opts.only?.length ? suite.scenarios.filter((s) => opts.only!.includes(s.name)) : suite.scenarios;
  const results: ScenarioResult[] = [];
  for (const s of chosen) {
    const r = await runScenario(s, engine);
    results.push(r);
    opts.onResult?.(r, chosen.length);
  }
  return { name: suite.name, file: suite.file, clock: opts.clock, startedAt, results };
}
