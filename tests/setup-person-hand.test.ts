// The person's hand at a real arm: what setup asks them to do. Lowering the arm after a stop and
// letting it hang is one request (one Enter), not two in a row; a release on its own still asks.
import { describe, expect, it } from 'vitest';
import type { Operator } from '../src/setup/driver.js';
import { PersonHand } from '../src/setup/operator.js';

function person(): { op: Operator; asked: string[] } {
  const asked: string[] = [];
  const op: Operator = {
    say: () => undefined,
    confirm: async () => undefined,
    ask: async (prompt) => void asked.push(prompt),
    signal: new AbortController().signal,
  };
  return { op, asked };
}

describe('PersonHand', () => {
  it('lower then release asks once, and that request says to let go', async () => {
    const { op, asked } = person();
    const hand = new PersonHand(op);
    await hand.toStop(0, -1);
    await hand.lower();
    await hand.release();
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatch(/joint 1 clockwise .* mechanical stop/);
    expect(asked[1]).toMatch(/lower the arm .* let go/);
  });

  it('a release that does not follow a lowering asks the person to let the arm hang', async () => {
    const { op, asked } = person();
    const hand = new PersonHand(op);
    await hand.lower();
    await hand.release();
    await hand.move(1, 30);
    await hand.release();
    expect(asked).toHaveLength(3);
    expect(asked[2]).toMatch(/let the arm hang freely/);
  });
});
