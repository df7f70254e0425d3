/** What the request handlers share. */
import type { FaultRegistry } from './faults';
import type { SessionHistory } from './history';
import type { SimOperator } from './operator';
import type { SimState } from './state';
import type { RequestStats } from './stats';

export interface ValidationFailure {
  method: string;
  path: string;
  status: number;
  detail: string;
}

export interface SimDeps {
  state: SimState;
  operator: SimOperator;
  faults: FaultRegistry;
  stats: RequestStats;
  history: SessionHistory;
  now: () => number;
  /** Spec validator rejections (requests 4xx, responses 500), for the contract test. */
  validationErrors: ValidationFailure[];
}
