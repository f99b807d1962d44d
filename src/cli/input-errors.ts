/**
 * The errors that are the user's input, not a bug, by class name: `twolink` prints them as one line with
 * exit code 2 (cli/main.ts), and the input fuzz bench counts them as clear refusals (bench/fuzz.ts).
 * Written once: the two lists had drifted (the CLI's lacked InjectionError, the bench's ControllerError).
 * By name, so that main.ts loads none of the modules that define them.
 */
export const INPUT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'UsageError',
  'RigFileError',
  'ReachError',
  'TrajectoryError',
  'FeasibilityError',
  'RecordingError',
  'FileError',
  'ControllerError',
  'InjectionError',
]);
