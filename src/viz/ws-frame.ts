/**
 * The header of a server's WebSocket frame (RFC 6455 section 5.2: final, unmasked, binary), which the
 * live server (viz/live.ts) writes itself ahead of a frame's messages to send them in one write.
 */

/** Bytes of a server's (unmasked) WebSocket frame header for a payload of `n` bytes. */
export function wsHeaderBytes(n: number): number {
  return n < 126 ? 2 : n < 65536 ? 4 : 10;
}

/** Writes the header of a final, unmasked binary WebSocket frame of `n` bytes at `at`; returns the offset after it. */
export function writeWsHeader(buf: Buffer, at: number, n: number): number {
  buf[at] = 0x82;
  if (n < 126) {
    buf[at + 1] = n;
    return at + 2;
  }
  if (n < 65536) {
    buf[at + 1] = 126;
    buf.writeUInt16BE(n, at + 2);
    return at + 4;
  }
  buf[at + 1] = 127;
  buf.writeBigUInt64BE(BigInt(n), at + 2);
  return at + 10;
}
