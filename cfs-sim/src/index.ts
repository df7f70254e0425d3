export { createSimulator, applyScenario, type Simulator, type SimulatorOptions } from './simulator';
export { SimState, SERVER_OPTION_DEFAULTS } from './state';
export {
  SimOperator,
  selectLayers,
  type HostOutcome,
  type SessionMode,
  type SessionModeRule,
  type OperatorSettings,
} from './operator';
export { FaultRegistry, type FaultRuleInput, type FaultAction } from './faults';
export { RequestStats, routeTemplate, type StatsSnapshot } from './stats';
export { SessionHistory, type HistoryEntry } from './history';
export { generateInventory, generateConfigurations, xname, type GenerateOptions, type Inventory } from './generator';
export { parseScenario, loadScenarioFile, ScenarioError, type Scenario } from './scenario';
export { computeStatus, layerStatus, effectiveRetries } from './status';
export { applyComponentPatch, appendState, setAutoFields, splitCommitSuffix, deepMerge } from './component-patch';
export { CONTRACT_SPEC, findSpec, loadPatchedSpec } from './spec';
export { utcStamp, localIsoSeconds } from './time';
export type * from './types';
export { TRANSPORTS, type Transport } from './transport';
export type { MemberSnapshot } from './snapshot';
export type { PickedFault, FaultPhase } from './faults';
