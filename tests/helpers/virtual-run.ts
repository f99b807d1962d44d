// The virtual-time runner lives in src (the bench and `twolink identify --mock` use it too).
export { lineMock, virtualRun, type VirtualRun } from '../../src/run/virtual.js';
