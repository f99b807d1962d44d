/**
 * The header line of a recording (the first line of the NDJSON that recorder.ts writes and
 * record/read.ts reads): its zod schema, written once. The writer checks its header against it, the
 * reader validates the line with it, so a recording twolink writes is one it can read. Fields added
 * after recordings existed are optional; unknown fields pass (a newer twolink's header still reads).
 */
import { z } from 'zod';

export const recordingHeaderSchema = z.looseObject({
  kind: z.literal('header'),
  twolink: z.string(),
  protocol: z.number(),
  startedAt: z.string(),
  joints: z.union([z.literal(1), z.literal(2)]),
  rateHz: z.number().positive(),
  feedforward: z.string().optional(),
  /** Where the arm was: `{ kind: 'mock' }` or `{ kind: 'port', path }`. */
  target: z.looseObject({ kind: z.string() }).optional(),
  /** Virtual time (run/virtual.ts); absent for real time. */
  clock: z.enum(['real', 'virtual']).optional(),
  /** Who started the recording when it is not --record (the dashboard's r key). */
  startedBy: z.string().optional(),
  /** The rig file as the run used it (`content`: its JSON). */
  rig: z.looseObject({ file: z.string(), name: z.string(), content: z.unknown() }),
  trajectories: z.array(z.looseObject({ name: z.string(), description: z.string().optional() })).default([]),
  injections: z.array(z.looseObject({ name: z.string(), at: z.number() })).optional(),
});

/** The named fields of a loose object's type (its index signature dropped). */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** A header as written (what `Recorder.open` takes): the schema's fields; the run's trajectories and injections as they are. */
export type RecordingHeader = Omit<Named<z.input<typeof recordingHeaderSchema>>, 'trajectories' | 'injections'> & {
  trajectories?: readonly { name: string; description?: string }[];
  injections?: readonly { name: string; at: number; value?: string }[];
};
/** A header as read back, validated. */
export type RecordingHeaderLine = z.output<typeof recordingHeaderSchema>;
