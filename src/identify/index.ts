/** Identification of the arm's dynamic parameters (`twolink identify`, docs/identify.md). */
export {
  BASE_PARAMETERS,
  baseParameters,
  fromVector,
  HOST_COULOMB_VELOCITY,
  modelBaseParameters,
  predictTorque,
  regressorConstants,
  regressorRows,
  toVector,
} from './regressor.js';
export type { BaseParameterInfo, BaseParameterKey, BaseParameters, RegressorConstants } from './regressor.js';
export { butterworthLowpass, derivatives, filtfilt, gainAt, zeroPhaseLowpass } from './filter.js';
export type { Biquad } from './filter.js';
export { conditionNumber, nnls } from './lsq.js';
export type { LsqResult } from './lsq.js';
export { defaultCentre, designExcitation, ExcitationError, trajectoryCondition } from './excitation.js';
export type { Excitation, ExcitationOptions } from './excitation.js';
export { FitError, fitTickFromObject, fitTickFromRow, fitTicks } from './fit.js';
export type { FitOptions, FitResult, FitTick, ParameterEstimate } from './fit.js';
export { identifiedRigFile, RealizationError, realizeArm } from './rigfile.js';
export { identify, plantParameters, relativeErrors, runExcitation, RunError, validate, validationPath } from './pipeline.js';
export type { Identified, RunPaths, ValidationFigures } from './pipeline.js';
export { readRecording, RecordingError } from './recording.js';
export type { Recording } from './recording.js';
export { replayTwinRmsDeg } from './replay.js';
export type { ReplayTick } from './replay.js';
export { virtualRun } from './virtual.js';
export type { VirtualRunOptions, VirtualRunResult } from './virtual.js';
