/** Writing many lines to a stream with backpressure. */
import type { Writable } from 'node:stream';

/** Writes `lines` (joined by LF, with a final LF) and resolves when the stream has taken them; ends it with `end`. */
export function writeLines(stream: Writable, lines: readonly string[], end: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const text = lines.length ? `${lines.join('\n')}\n` : '';
    const done = (err?: Error | null): void => (err ? reject(err) : resolve());
    if (end) {
      stream.once('error', reject);
      stream.end(text, () => done());
      return;
    }
    if (stream.write(text)) resolve();
    else stream.once('drain', () => resolve());
  });
}
