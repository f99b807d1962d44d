// The real-time HIL engine times "stopped after the injection" from when the pty rig says it applied an
// injection (its `injected` report: the rig applies them on its simulated arm's time from the host's
// handshake, which a starved rig lets fall behind the wall's), not from its start plus the injection's time.
import { describe, expect, it } from 'vitest';
import { injectionWallMs } from '../src/hil/engines.js';
import { parseInjection } from '../src/mock/injections.js';

const STARTED_MS = 10_000;
const HANDSHAKE_MS = 12_500;

describe('the real-time HIL engine: when the first injection happened', () => {
  it("is when the rig says it applied it (its wall time since the host's handshake), a starved rig's being later than its time", () => {
    const stall = parseInjection('stall=2@3');
    const injected = [{ kind: 'injected' as const, injection: 'stall=2@3', at: 3, plantS: 3.001, wallS: 5.25 }];
    expect(injectionWallMs([stall], { startedMs: STARTED_MS, handshakeMs: HANDSHAKE_MS, injected }, 3)).toBe(HANDSHAKE_MS + 5250);
  });
  it("is the handshake plus its time while the rig has not reported it, and for an injection on the host's loop thread", () => {
    const stall = parseInjection('stall=2@3');
    expect(injectionWallMs([stall], { startedMs: STARTED_MS, handshakeMs: HANDSHAKE_MS, injected: [] }, 3)).toBe(HANDSHAKE_MS + 3000);
    const busy = parseInjection('busy=20@1.5');
    // a report for another injection at another time is not this one's
    const other = [{ kind: 'injected' as const, injection: 'stall=2@3', at: 3, plantS: 3, wallS: 9 }];
    expect(injectionWallMs([busy, stall], { startedMs: STARTED_MS, handshakeMs: HANDSHAKE_MS, injected: other }, 1.5)).toBe(
      HANDSHAKE_MS + 1500,
    );
  });
  it("is the rig's start plus its time when no handshake was reported", () => {
    expect(injectionWallMs([parseInjection('busy=20@1.5')], { startedMs: STARTED_MS, injected: [] }, 1.5)).toBe(STARTED_MS + 1500);
  });
});
