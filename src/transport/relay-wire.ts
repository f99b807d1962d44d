/**
 * What the serial relay process (serial-relay-main.ts) and its parent's binding (relay-binding.ts)
 * say to each other over the IPC channel; the bytes themselves go over stdin and stdout.
 */
import type { CableErrno } from './cable.js';
import type { SetOptions } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { z } from 'zod';
import type { DtrOnOpen } from './dtr.js';

/** The relay's argument (one JSON word on its command line). */
const relayArgs = z.strictObject({
  path: z.string().min(1),
  baudRate: z.number().int().positive().max(12_000_000),
  lock: z.boolean(),
  /** serialport's open option; false holds DTR off on Windows (dtr.ts). On Linux the relay clears HUPCL itself. */
  hupcl: z.boolean(),
  /** Ask for priority (Linux: SCHED_FIFO at rtPriority for all its threads; elsewhere os.setPriority). */
  rt: z.boolean(),
  rtPriority: z.number().int().min(1).max(99),
  /** Wake a read whose promise Node >= 26.4 would leave waiting (serial-relay-main.ts nudgeReads). */
  nudge: z.boolean(),
});
export type RelayArgs = z.infer<typeof relayArgs>;

/** The relay's argument from its command line; throws naming the field. */
export function parseRelayArgs(text: string | undefined): RelayArgs {
  let raw: unknown;
  try {
    raw = JSON.parse(text ?? '');
  } catch {
    throw new Error(`the serial relay's argument is not JSON: ${JSON.stringify(text)}`);
  }
  const r = relayArgs.safeParse(raw);
  if (!r.success)
    throw new Error(
      `the serial relay's argument: ${r.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/** Parent -> relay: a request answered by a `reply` with its id. `drain` waits until the first `bytes` bytes of stdin are written, then drains the port. */
export type RelayRequest =
  | { type: 'update'; id: number; baudRate: number }
  | { type: 'set'; id: number; options: SetOptions }
  | { type: 'get'; id: number }
  | { type: 'flush'; id: number }
  | { type: 'drain'; id: number; bytes: number };

/** Relay -> parent: the answer to a request. */
export interface RelayReply {
  type: 'reply';
  id: number;
  error?: string;
  /** What the call returned (a PortStatus for `get`). */
  value?: unknown;
}

/**
 * Relay -> parent, unasked: the port open (the relay's priority, what the open did to DTR: dtr.ts),
 * opening failed, or the port closed by itself (`disconnected`: the device vanished; `code`: the errno
 * that says so, cable.ts's cableLoss in the relay, as the tty binding classifies it).
 */
export type RelayStatus =
  | { type: 'open'; pid: number; priority: string; dtr: DtrOnOpen }
  | { type: 'error'; message: string }
  | { type: 'closed'; disconnected: boolean; message: string; code?: CableErrno };
