/**
 * `--port PATH` or `--mock`: where the arm is, as every command that moves it reads it (run, identify,
 * teach, tune, setup). The checks and their words, written once.
 */
import type { Rig } from '../config/load.js';
import { UsageError } from './args.js';

/** What the target options of a command give. */
export interface PortOrMockArgs {
  port?: string | boolean | string[] | undefined;
  mock?: string | boolean | string[] | undefined;
}

/** Both --port and --mock given: refused. */
export function refuseBoth(v: PortOrMockArgs): void {
  if (v.port !== undefined && v.mock) throw new UsageError('give either --port or --mock, not both');
}

/** --mock on a rig file with nothing to simulate (no "plant" section): refused, naming a mock rig file to use. */
export function needPlant(rig: Rig, mockRigFile = 'rigs/mock-arm.json'): void {
  if (!rig.plant)
    throw new UsageError(
      `${rig.file} has no "plant" section, so there is nothing to simulate: use a mock rig file (${mockRigFile}) or --port`,
    );
}

/** One of --port and --mock, for a command that needs the arm (tune, setup): both, neither, or a mock with no plant are refused. */
export function portOrMock(v: PortOrMockArgs, rig: Rig): void {
  refuseBoth(v);
  if (v.port === undefined && !v.mock)
    throw new UsageError('say where the arm is: --port PATH (the board) or --mock (the simulated rig of the rig file)');
  if (v.mock) needPlant(rig);
}
