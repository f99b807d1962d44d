/**
 * What each injected fault does to the mock rig: one table, used wherever a mock runs (its own thread
 * beside the loop, the pty rig's process, the loop's thread in virtual time). The faults of the host
 * itself (`busy`, `throw`) act on the loop's thread and are not here. Parsing and checking the values
 * is `parseFault`'s job (faults.ts); here a value is already valid.
 */
import type { FaultKind, FaultSpec } from './faults.js';
import type { LineBoard } from './line-board.js';
import type { Plant } from './plant.js';

/** The parts of a mock rig that faults act on. */
export interface MockParts {
  plant: Plant;
  board: Pick<LineBoard, 'faults' | 'reset' | 'injectRaw'>;
  /** The cable is pulled. */
  unplug(): void;
}

const joint = (v: string | undefined): number => Math.max(0, Number(v?.split(':')[0] ?? '1') - 1);
const second = (v: string | undefined, d: number): number => Number(v?.split(':')[1] ?? d);
const num = (v: string | undefined, d: number): number => (v === undefined ? d : Number(v));

/** Effects of the injected faults of the rig (every kind but the host's own). */
export const FAULT_EFFECTS: Partial<Record<FaultKind, (m: MockParts, value: string | undefined) => void>> = {
  payload: (m, v) => m.plant.setPayload(num(v, 0.2)),
  stall: (m, v) => void (m.plant.faults.stalled[joint(v)] = true),
  slip: (m, v) => void (m.plant.faults.encoderOffset[joint(v)]! += second(v, 100)),
  reverse: (m, v) => void (m.plant.faults.encoderReversed[joint(v)] = true),
  dead: (m, v) => void (m.plant.faults.motorDead[joint(v)] = true),
  sag: (m, v) => void (m.plant.faults.supplyScale = num(v, 0.6)),
  push: (m, v) => void (m.plant.faults.extraTorque[joint(v)] = second(v, 1)),
  drop: (m, v) => void (m.board.faults.dropProbability = num(v, 0.01)),
  corrupt: (m, v) => void (m.board.faults.corruptProbability = num(v, 0.01)),
  latency: (m, v) => void (m.board.faults.extraLatency = num(v, 5) / 1000),
  silent: (m) => void (m.board.faults.silent = true),
  unplug: (m) => m.unplug(),
  reset: (m) => m.board.reset(),
  garbage: (m, v) => {
    const n = num(v, 5000);
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = (i * 2654435761) >>> 24;
    m.board.injectRaw(b);
  },
  longline: (m, v) => m.board.injectRaw(new Uint8Array(num(v, 1000000)).fill(0x54)),
};

/** True for the faults that act on the host's loop thread rather than on the rig. */
export function isHostFault(kind: FaultKind): boolean {
  return kind === 'busy' || kind === 'throw';
}

/** Applies a rig fault; false if the mock has no such fault (a host fault). */
export function applyFault(m: MockParts, f: FaultSpec): boolean {
  const fx = FAULT_EFFECTS[f.kind];
  if (!fx) return false;
  fx(m, f.value);
  return true;
}
