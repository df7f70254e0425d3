export * from './errors';
export * from './schemas';
export * from './client';
export type { RequestInfo } from './transport';
export * from './fast-checks';
