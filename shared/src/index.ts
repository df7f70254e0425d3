export * from './env';
export * from './logger';
export * from './heartbeat';
export * from './cfs';
export * from './telemetry';
