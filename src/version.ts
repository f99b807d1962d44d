/** Version of twolink (kept equal to package.json's by a test). */
export const VERSION = '0.1.0';
/** Version of the line protocol this host speaks (firmware-protocol/PROTOCOL.md); defined once, in the codec. */
export { PROTOCOL as PROTOCOL_VERSION } from './protocol/codec.js';
