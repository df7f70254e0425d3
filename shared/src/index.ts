export * from './settings';
export * from './settings-names';
export * from './contract';
export * from './logger';
export * from './atomic-file';
export * from './heartbeat';
export * from './cfs';
export * from './run-main';
// span helpers only: the SDK is `@cfs-batcher/shared/tracing`, loaded by startTracing() when tracing is on
export * from './telemetry';
export * from './cli';
