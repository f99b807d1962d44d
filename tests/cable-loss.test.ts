// A cable pulled, told from a port closed (src/transport/cable.ts): the one classification every
// serial path uses, and the fault's words.
import { describe, expect, it } from 'vitest';
import { DisconnectedError } from '@serialport/stream';
import { cableLoss } from '../src/transport/cable.js';
import { describeStop } from '../src/control/stop.js';
import { stopSchema } from '../src/run/stop-schema.js';

const errno = (code: string, message: string): NodeJS.ErrnoException => Object.assign(new Error(message), { code });

describe('cableLoss: errno -> a cable pulled', () => {
  it('EIO, ENXIO and ENODEV from a read or write are the device gone, naming the port', () => {
    expect(cableLoss('/dev/ttyACM0', errno('EIO', 'EIO: i/o error, read'))).toEqual({
      port: '/dev/ttyACM0',
      code: 'EIO',
      message: 'EIO: i/o error, read',
    });
    expect(cableLoss('/dev/ttyACM0', errno('ENXIO', 'ENXIO: no such device or address, write'))?.code).toBe('ENXIO');
    expect(cableLoss('/dev/ttyUSB1', errno('ENODEV', 'ENODEV: no such device, read'))?.code).toBe('ENODEV');
    // a bare code, as a relay process would hand it on
    expect(cableLoss('/dev/ttyACM0', 'ENODEV')).toEqual({ port: '/dev/ttyACM0', code: 'ENODEV', message: 'ENODEV' });
  });

  it("serialport's DisconnectedError keeps only the message: the code is read from it", () => {
    expect(cableLoss('/dev/ttyACM0', new DisconnectedError('EIO: i/o error, read'))).toEqual({
      port: '/dev/ttyACM0',
      code: 'EIO',
      message: 'EIO: i/o error, read',
    });
  });

  it('a port closed by us, a cancelled read, other errors and nothing at all are not a cable pulled', () => {
    expect(cableLoss('/dev/ttyACM0', undefined)).toBeUndefined();
    expect(cableLoss('/dev/ttyACM0', null)).toBeUndefined();
    expect(cableLoss('/dev/ttyACM0', new Error('Port is closed'))).toBeUndefined();
    expect(cableLoss('/dev/ttyACM0', errno('EAGAIN', 'EAGAIN: resource temporarily unavailable, read'))).toBeUndefined();
    expect(cableLoss('/dev/ttyACM0', errno('EBADF', 'EBADF: bad file descriptor, read'))).toBeUndefined();
    // a word that only contains the letters is not the code
    expect(cableLoss('/dev/ttyACM0', new Error('VIEIO happened'))).toBeUndefined();
    expect(cableLoss('/dev/ttyACM0', 'EBUSY')).toBeUndefined();
  });
});

describe('fault:cable', () => {
  it('names the port and the error, and reads back through the stop schema', () => {
    const stop = { kind: 'fault', fault: { kind: 'cable', port: '/dev/ttyACM0', code: 'EIO', message: 'EIO: i/o error, read' } } as const;
    expect(describeStop(stop)).toMatch(/^fault:cable: \/dev\/ttyACM0 vanished \(EIO: i\/o error, read\): a USB cable pulled/);
    expect(stopSchema.parse(JSON.parse(JSON.stringify(stop)))).toEqual(stop);
  });
});
