/**
 * What the telemetry tests that start the NodeSDK inside jest share: a quiet console, the environment put back as
 * it was when this module loaded, and a stop that clears the API globals so the next start works.
 */
import { context, diag, propagation, trace } from '@opentelemetry/api';
import { setLogSilent, type Telemetry } from '@cfs-batcher/shared';

/** NodeSDK registers API globals that its shutdown leaves in place; clear them so the next test can start again. */
export async function stopTelemetry(t: Telemetry): Promise<void> {
  await t.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
  diag.disable();
}

/** Keeps the console quiet for the file's tests; log sinks still receive every line. */
export function quietLogs(): void {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));
}

const savedEnv = { ...process.env };
export function restoreEnv(): void {
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
}
