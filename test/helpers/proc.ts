/** The suite's child processes: the one spawner in scripts/src/proc.ts (also the local pod's and the bench's). */
export * from '../../scripts/src/proc';
