// The serialport relay path (--serial serialport, transport/relay-binding.ts) classifies a vanished port
// as the tty path does (issue 34 item 4): the relay process runs cableLoss on the whole error and sends
// the errno; the parent's error carries it in `code` and at the head of its message, the only part
// serialport's stream keeps (DisconnectedError(err.message)), so the link's cableLoss finds it again.
import { describe, expect, it } from 'vitest';
import { closedError } from '../src/transport/relay-binding.js';
import { cableLoss } from '../src/transport/cable.js';
import { UnpluggedError } from '../src/protocol/binding-port.js';

describe("the relay's closed port, classified", () => {
  it('a vanished device (the relay saw EIO): fault:cable material, after serialport keeps only the message', () => {
    // macOS and Windows word it without the errno in the message; the relay's code is what counts.
    const e = closedError('/dev/ttyACM0', { type: 'closed', disconnected: true, message: 'Port was disconnected', code: 'EIO' });
    expect(e).toBeInstanceOf(UnpluggedError);
    expect((e as NodeJS.ErrnoException).code).toBe('EIO');
    expect(cableLoss('/dev/ttyACM0', e)).toMatchObject({ code: 'EIO' });
    // What the stream keeps: the message alone.
    expect(cableLoss('/dev/ttyACM0', new Error(e.message))).toEqual({ port: '/dev/ttyACM0', code: 'EIO', message: e.message });
    // A message that names it already is not prefixed twice.
    expect(closedError('/p', { type: 'closed', disconnected: true, message: 'ENXIO: no such device', code: 'ENXIO' }).message).toBe(
      '/p: ENXIO: no such device',
    );
  });
  it('a port that closed without such an error is not a cable pulled', () => {
    const e = closedError('/dev/ttyACM0', { type: 'closed', disconnected: false, message: 'the port closed' });
    expect(e).not.toBeInstanceOf(UnpluggedError);
    expect(cableLoss('/dev/ttyACM0', e)).toBeUndefined();
    // Disconnected without an errno (the old relay's message): a disconnection, not classified as a cable by name.
    expect(
      cableLoss('/dev/ttyACM0', closedError('/dev/ttyACM0', { type: 'closed', disconnected: true, message: 'Port was disconnected' })),
    ).toBeUndefined();
  });
});
