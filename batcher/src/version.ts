/** Reported in cfs_batcher_build_info and the trace resource. */
export const BATCHER_VERSION = '0.1.0';
