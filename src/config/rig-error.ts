/**
 * The error of a rig file (rig.ts re-exports it): a file of its own so that the sections that check
 * their own fields (wiring.ts) need not import the schema that includes them.
 */

/** A rig file could not be read or is invalid; the message names the file and the field. */
export class RigFileError extends Error {
  override readonly name = 'RigFileError';
  constructor(
    readonly file: string,
    /** What is wrong; starts with the field when there is one. */
    detail: string,
    /** Dotted path of the (first) field at fault, when there is one. */
    readonly field?: string,
  ) {
    super(`${file}: ${detail}`);
  }
}
