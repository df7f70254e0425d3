export * from './errors';
export * from './schemas';
export * from './derived-check';
export * from './client';
export * from './requests';
export * from './client-options';
export * from './base-check';
export type { RequestInfo } from './transport';
export type { CallState } from './call-watch';
