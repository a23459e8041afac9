export { childEnv } from './child-env.js';
export { planLaunch, type LaunchPlan, type HostFacts } from './launch-plan.js';
export { PrivateHome } from './private-home.js';
export { SandboxProbe } from './sandbox-probe.js';
export { SandboxRefusal } from './sandbox-refusal.js';
export { UidPool, SANDBOX_GID, UID_BASE } from './uid-pool.js';
export { killProcessesOf, type Reaped } from './uid-reaper.js';
