/**
 * Runs on the mock rig in virtual time: the same loop, runner, line protocol and plant as
 * `twolink run --mock`, with a VirtualClock, so a minute of motion takes a second or two and is
 * deterministic. The runner is src/run/virtual.ts; these are its names as identification uses them.
 */
import { virtualRun } from '../run/virtual.js';

export { virtualRun };
export type { VirtualRun as VirtualRunResult } from '../run/virtual.js';
export type VirtualRunOptions = NonNullable<Parameters<typeof virtualRun>[2]>;
