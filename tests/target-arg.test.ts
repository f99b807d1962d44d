// --port or --mock, as run, identify, teach, tune and setup read them (src/cli/target-arg.ts).
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/args.js';
import { needPlant, portOrMock, refuseBoth } from '../src/cli/target-arg.js';
import { loadRig } from '../src/config/load.js';

const mockRig = loadRig('rigs/mock-arm.json');
const benchRig = loadRig('rigs/bench-arm.json'); // a real arm's file: no "plant" section

describe('where the arm is: --port or --mock', () => {
  it('both given is a usage error; one alone is not', () => {
    expect(() => refuseBoth({ port: '/dev/ttyACM0', mock: true })).toThrow(new UsageError('give either --port or --mock, not both'));
    expect(() => refuseBoth({ port: '/dev/ttyACM0' })).not.toThrow();
    expect(() => refuseBoth({ mock: true })).not.toThrow();
  });

  it('--mock on a rig file with nothing to simulate names the file and the mock rig file to use', () => {
    expect(() => needPlant(benchRig)).toThrow(
      /bench-arm\.json has no "plant" section, so there is nothing to simulate: use a mock rig file \(rigs\/mock-arm\.json\) or --port$/,
    );
    expect(() => needPlant(benchRig, 'rigs/mock-arm-far.json')).toThrow(/\(rigs\/mock-arm-far\.json\)/);
    expect(() => needPlant(mockRig)).not.toThrow();
  });

  it('a command that needs the arm: neither is refused with both choices named; a port needs no plant', () => {
    expect(() => portOrMock({}, mockRig)).toThrow(/^say where the arm is: --port PATH \(the board\) or --mock/);
    expect(() => portOrMock({ port: '/dev/ttyACM0', mock: true }, mockRig)).toThrow(/not both/);
    expect(() => portOrMock({ mock: true }, benchRig)).toThrow(UsageError);
    expect(() => portOrMock({ port: '/dev/ttyACM0' }, benchRig)).not.toThrow();
    expect(() => portOrMock({ mock: true }, mockRig)).not.toThrow();
  });
});
