/** Record shapes stored by the simulator, as the real CFS v3 API stores them (Redis documents). */

export type LayerResult = 'applied' | 'failed' | 'skipped' | 'incomplete';

export interface StateLayer {
  clone_url: string;
  playbook: string;
  commit: string;
  status: string;
  session_name: string;
  last_updated: string;
}

export interface ConfigLayer {
  name?: string;
  clone_url?: string;
  source?: string;
  playbook?: string;
  commit?: string;
  branch?: string;
  special_parameters?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Configuration {
  name: string;
  description?: string;
  tenant_name?: string;
  last_updated?: string;
  layers: ConfigLayer[];
  additional_inventory?: Record<string, unknown>;
}

export interface Component {
  id: string;
  desired_config?: string;
  enabled?: boolean;
  error_count?: number;
  retry_policy?: number;
  tags?: Record<string, string>;
  state?: StateLayer[];
  [key: string]: unknown;
}

export type SessionStatus = 'pending' | 'running' | 'complete';
export type Succeeded = 'none' | 'true' | 'false' | 'unknown';

export interface Session {
  name: string;
  configuration: { name: string; limit: string };
  ansible: { config: string; limit: string; verbosity: number; passthrough: string };
  target: { definition: string; groups: Array<{ name: string; members: string[] }>; image_map: unknown[] };
  status: {
    artifacts: unknown[];
    session: {
      job?: string;
      start_time: string;
      completion_time?: string;
      status: SessionStatus;
      succeeded: Succeeded;
    };
  };
  tags: Record<string, string>;
  debug_on_failure: boolean;
  logs?: string;
}

export type ComponentStatus = 'unconfigured' | 'failed' | 'pending' | 'configured';
export const COMPONENT_STATUSES: readonly ComponentStatus[] = ['unconfigured', 'failed', 'pending', 'configured'];

export type Options = Record<string, unknown>;
