/**
 * The `twolink` command. Each command's module is imported only when it runs, so that the model
 * commands never load serialport, johnny-five or blessed.
 */
import { INPUT_ERROR_NAMES } from './input-errors.js';

export interface Command {
  summary: string;
  example: string;
  run(argv: readonly string[]): Promise<number> | number;
}

/** The commands, in the order `twolink --help` lists them (docs/reference/cli.md is generated from them). */
export const COMMANDS: Record<string, Command> = {
  demo: {
    summary: 'the whole stack on the built-in simulated rig, no hardware (what npm start runs)',
    example: 'twolink demo',
    run: async (a) => (await import('./run-command.js')).demoCommand(a),
  },
  run: {
    summary: 'drive the arm (or the mock rig) along a trajectory: feedforward + PID at a fixed rate',
    example: 'twolink run --rig rigs/mock-arm.json --mock --traj reach --json',
    run: async (a) => (await import('./run-command.js')).runCommand(a),
  },
  teach: {
    summary: 'float the arm and record a motion shown by hand; write a trajectory file that run --traj follows',
    example: 'twolink teach --rig rigs/mock-arm-identified.json --mock --hand circle --out demo.json',
    run: async (a) => (await import('./teach-command.js')).teachCommand(a),
  },
  replay: {
    summary: 'follow a taught trajectory file (twolink run --traj FILE) and report how closely',
    example: 'twolink replay demo.json --rig rigs/mock-arm-identified.json --mock --speed 0.5',
    run: async (a) => (await import('./run-command.js')).replayCommand(a),
  },
  rig: {
    summary: 'the mock rig on a serial port or a new pty (a simulated arm that speaks the protocol)',
    example: 'twolink rig --rig rigs/mock-arm.json --pty',
    run: async (a) => (await import('./rig-command.js')).rigCommand(a),
  },
  model: {
    summary: 'the physics calculator: id, fd, fk, ik, jacobian (one JSON object on stdout)',
    example: 'twolink model id --rig rigs/seed-arm.json --q 0,0 --qd 0,0 --qdd 0,0',
    run: async (a) => (await import('./model-commands.js')).modelCommand(a),
  },
  sim: {
    summary: 'simulate the arm at a fixed step (RK4, semi-implicit or explicit Euler)',
    example: 'twolink sim --rig rigs/seed-arm.json --q0=-1.2,0.5 --duration 5',
    run: async (a) => (await import('./sim-command.js')).simCommand(a),
  },
  traj: {
    summary: 'sample a minimum-jerk trajectory (joint or endpoint space) as NDJSON',
    example: 'twolink traj --rig rigs/seed-arm.json --space endpoint --from 0.98,0 --to 0.5,0.5 --duration 1 --rate 100',
    run: async (a) => (await import('./model-commands.js')).trajCommand(a),
  },
  compare: {
    summary: 'errors of a recorded run against its plan, its twin and another run; figures; CSV and MCAP exports',
    example: 'twolink compare reach.ndjson reach-pid.ndjson --plot reach.svg',
    run: async (a) => (await import('./compare-command.js')).compareCommand(a),
  },
  plot: {
    summary: "figures of a trajectory (seed 002's grid, paths) or of a recorded run, as SVG or HTML",
    example: 'twolink plot traj --rig rigs/mock-arm.json --traj reach --out reach.svg',
    run: async (a) => (await import('./compare-command.js')).plotCommand(a),
  },
  identify: {
    summary: "fit the arm's masses, inertias and friction from an excitation run or a recording; write an identified rig file",
    example: 'twolink identify --rig rigs/mock-arm-far.json --mock --out identified.json',
    run: async (a) => (await import('./identify-command.js')).identifyCommand(a),
  },
  setup: {
    summary:
      'the first thing to run on a new arm: finds wiring mistakes step by step (encoders, zero, motors) and writes the rig file that matches the arm',
    example: 'twolink setup --rig my-arm.json --port /dev/ttyACM0',
    run: async (a) => (await import('./setup-command.js')).setupCommand(a),
  },
  tune: {
    summary: "measures each joint's frequency response and sets the PID gains for a bandwidth, with the margins measured",
    example: 'twolink tune --rig my-arm.json --port /dev/ttyACM0 --plot tune-figures',
    run: async (a) => (await import('./tune-command.js')).tuneCommand(a),
  },
  hil: {
    summary: 'hardware-in-the-loop test suites against the mock rig: a table of figures against limits, JUnit XML for CI',
    example: 'twolink hil examples/hil/suite.json --junit hil.xml',
    run: async (a) => (await import('./hil-command.js')).hilCommand(a),
  },
  urdf: {
    summary: "the arm as a URDF (primitive shapes, the rig's masses, inertias and soft limits) for Foxglove, RViz, simulators",
    example: 'twolink urdf --rig rigs/mock-arm.json --out arm.urdf',
    run: async (a) => (await import('./urdf-command.js')).urdfCommand(a),
  },
  doctor: {
    summary:
      'what limits real time on this machine and this cable: kernel, SCHED_FIFO, governor, the USB adapter, a measured round trip, the rate to use',
    example: 'twolink doctor --port /dev/ttyACM0',
    run: async (a) => (await import('./doctor-command.js')).doctorCommand(a),
  },
  ports: {
    summary: 'list serial ports',
    example: 'twolink ports',
    run: async (a) => (await import('./ports-command.js')).portsCommand(a),
  },
};

function help(): string {
  const w = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    'twolink: drive a two-link robot arm from a laptop',
    '',
    'usage: twolink COMMAND [options]      (twolink COMMAND --help for its options)',
    '',
    ...Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(w)}  ${c.summary}\n  ${' '.repeat(w)}  e.g. ${c.example}`),
    '',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../version.js');
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS[name];
  try {
    if (!cmd) {
      // args.js loads zod: only when it is needed (twolink --help starts faster without it)
      const { UsageError } = await import('./args.js');
      throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(COMMANDS).join(', ')} (twolink --help)`);
    }
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof Error && INPUT_ERROR_NAMES.has(e.name)) {
      process.stderr.write(`twolink: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
