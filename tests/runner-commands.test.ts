// What the runner does on the board for the dashboard's lifecycle commands: the board's half of
// disable / enable / zero goes out only when the loop took the command (the loop's table,
// control/commands.ts). Asserted at the boundary: a spy on the link's enable and zero.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import type { LoopCommand } from '../src/control/commands.js';
import { builtinPath } from '../src/model/builtins.js';
import { F } from '../src/telemetry/tick.js';
import { LineLink } from '../src/transport/line-link.js';
import { virtualRun } from './helpers/virtual-run.js';

afterEach(() => vi.restoreAllMocks());

/** A reach; `at` (loop time [s]) -> the commands sent then; returns the link calls after the start. */
async function run(script: { at: number; send: LoopCommand[] }[]) {
  const rig = loadRig('rigs/mock-arm.json');
  const enable = vi.spyOn(LineLink.prototype, 'enable');
  const zero = vi.spyOn(LineLink.prototype, 'zero');
  let send: ((c: LoopCommand) => void) | undefined;
  const states: string[] = [];
  const pending = script.slice();
  const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], {
    keepRows: false,
    onReady: (c) => {
      send = c.send;
      // What the runner did before the loop's first sample (connect, enable) is not the commands' doing.
      enable.mockClear();
      zero.mockClear();
    },
    onTick: (core) => {
      while (pending.length && core.row[F.t]! >= pending[0]!.at) {
        states.push(core.state);
        for (const c of pending.shift()!.send) send!(c);
      }
    },
  });
  return { r, enable: enable.mock.calls.map((c) => c[0]), zero: zero.mock.calls.length, states };
}

describe("the runner's board-side half of a lifecycle command", () => {
  it('an enable the loop refuses (it is not disabled) and a zero it refuses (it is tracking) reach no board', async () => {
    const { r, enable, zero, states } = await run([{ at: 0.6, send: [{ kind: 'enable' }, { kind: 'zero' }] }]);
    expect(states).toEqual(['track']);
    expect(enable).toEqual([]);
    expect(zero).toBe(0);
    expect(r.summary.stop).toEqual({ kind: 'done' });
  });

  it('disable, zero and enable the loop takes reach the board, in order', async () => {
    const { enable, zero, states } = await run([
      { at: 0.6, send: [{ kind: 'disable' }] },
      { at: 0.7, send: [{ kind: 'zero' }] },
      { at: 0.8, send: [{ kind: 'enable' }, { kind: 'stop', reason: { kind: 'requested', text: 'test' } }] },
    ]);
    expect(states).toEqual(['track', 'disabled', 'disabled']);
    expect(enable).toEqual([false, true]);
    expect(zero).toBe(1);
  });
});
