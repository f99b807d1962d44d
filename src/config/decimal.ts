/**
 * Numbers as a person writes them on a command line or in a list (`--q 0.1,-0.2`, `--wiring cpr=1:2048`,
 * `--constrain line:0.3,-0.3,0.3,0.1`): decimal, optionally signed, with an optional exponent. Never
 * hex or binary (`0x10`, `0b1`), never `Infinity`, never an empty or blank text (Number('') is 0).
 * Every option that takes a number reads it through here, so that they all refuse the same texts.
 */
/** Decimal number text: `12`, `-0.5`, `.5`, `3e-2`. */
export const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The number a decimal text says, or NaN for any other text (hex, binary, empty, words). */
export function decimal(text: string): number {
  return DECIMAL.test(text.trim()) ? Number(text.trim()) : NaN;
}

/** A hint for a text that is a number in another base, for the messages. */
export function baseHint(text: string): string {
  return /^[+-]?0[xXbBoO]/.test(text.trim()) ? ' (write it in decimal)' : '';
}

/** For z.preprocess: a text becomes the number it says in decimal (NaN, refused by z.number(), for any other text). */
export function fromDecimal(t: unknown): unknown {
  return typeof t === 'string' ? decimal(t) : t;
}
