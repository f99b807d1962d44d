/**
 * The zod schema of a stop (control/stop.ts `StopReason`), for what reads one back from outside this
 * process: the summary line of a recording (record/read.ts), the `--json` summary of a child
 * `twolink run` (the bench). Written once here, checked against the type by the compiler.
 */
import { z } from 'zod';
import type { Fault, StopReason } from '../control/stop.js';

const joint = z.number().int().nonnegative();
const num = z.number();

const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('link-lost'), ms: num, samples: num }),
  z.strictObject({ kind: z.literal('link-closed') }),
  z.strictObject({ kind: z.literal('cable'), port: z.string(), code: z.string(), message: z.string() }),
  z.strictObject({ kind: z.literal('board-reset') }),
  z.strictObject({ kind: z.literal('watchdog') }),
  z.strictObject({ kind: z.literal('limit'), joint, deg: num, minDeg: num, maxDeg: num }),
  z.strictObject({ kind: z.literal('speed'), joint, degS: num, limitDegS: num }),
  z.strictObject({ kind: z.literal('encoder-jump'), joint, deg: num, ms: num }),
  z.strictObject({ kind: z.literal('encoder-slip'), joint, steps: num, deg: num, seconds: num }),
  z.strictObject({ kind: z.literal('saturated'), joint, seconds: num }),
  z.strictObject({ kind: z.literal('non-finite'), what: z.string() }),
  z.strictObject({ kind: z.literal('twin-alarm'), joints: z.array(joint) }),
  z.strictObject({ kind: z.literal('stall'), ms: num, watchdogMs: num, boardWatchdog: z.boolean() }),
  z.strictObject({ kind: z.literal('wiring'), joint, message: z.string() }),
  z.strictObject({
    kind: z.literal('following-error'),
    joint,
    errorDeg: num,
    limitDeg: num,
    t: num,
    cause: z.enum(['dead-motor', 'jammed', 'stuck', 'back-driven']).optional(),
  }),
  z.strictObject({ kind: z.literal('controller'), message: z.string() }),
  z.strictObject({ kind: z.literal('host'), message: z.string() }),
  z.strictObject({ kind: z.literal('recording'), file: z.string(), message: z.string() }),
  z.strictObject({ kind: z.literal('internal'), where: z.string(), message: z.string() }),
]) satisfies z.ZodType<Fault>;

const notes = {
  threadCut: z.string().optional(),
  rigStarved: z.strictObject({ maxMs: num, totalMs: num }).optional(),
};

/** A stop as JSON: `{ "kind": "fault", "fault": { "kind": "link-lost", ... } }`. */
export const stopSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('done'), ...notes }),
  z.strictObject({ kind: z.literal('quit'), ...notes }),
  z.strictObject({ kind: z.literal('interrupted'), signal: z.string().optional(), ...notes }),
  z.strictObject({ kind: z.literal('requested'), text: z.string(), ...notes }),
  z.strictObject({ kind: z.literal('estop'), by: z.string().optional(), ...notes }),
  z.strictObject({ kind: z.literal('timeout'), seconds: num, ...notes }),
  z.strictObject({ kind: z.literal('fault'), fault: faultSchema, ...notes }),
]) satisfies z.ZodType<StopReason>;
