export * from './errors';
export * from './schemas';
export * from './derived-check';
export * from './client';
export type { RequestInfo } from './transport';
