export * from './config';
export * from './history';
export * from './verdict';
export * from './status';
export * from './metrics';
export * from './cfs-observer';
export * from './app';
export * from './sidecar';
