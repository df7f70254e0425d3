export * from './errors';
export * from './schemas';
export * from './client';
export type { RequestInfo } from './transport';
