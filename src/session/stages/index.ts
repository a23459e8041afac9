import { compose } from '../request-pipeline.js';
import { argumentsStage } from './arguments-stage.js';
import { confirmStage, declaresFormElicitation } from './confirm-stage.js';
import { hiddenTextStage } from './hidden-text-stage.js';
import { legacyShapeStage } from './legacy-shape-stage.js';
import { lifecycleStage } from './lifecycle-stage.js';
import { limitsStage } from './limits-stage.js';
import { observeStage } from './observe-stage.js';
import { policyStage } from './policy-stage.js';
import { routeStage } from './route-stage.js';
import { toolsStage } from './tools-stage.js';
import { traceStage } from './trace-stage.js';

export { declaresFormElicitation };
export { argumentsStage, confirmStage, hiddenTextStage, legacyShapeStage, lifecycleStage, limitsStage, observeStage, policyStage, routeStage, toolsStage, traceStage };

/**
 * A client request's path: (trace around) (legacy shape around: what its 2025 revision can hold) lifecycle → tools (exposed names, meta-tools) → policy → argument rules →
 * confirmation → limits → (observe around) hidden text → route. Observe wraps the rest so it sees the outcome; each
 * refusal before it reports its own metrics.
 */
export const CLIENT_REQUEST_STAGES = [traceStage, legacyShapeStage, lifecycleStage, toolsStage, policyStage, argumentsStage, confirmStage, limitsStage, observeStage, hiddenTextStage, routeStage] as const;

export const clientRequestPipeline = compose(CLIENT_REQUEST_STAGES);

/**
 * A 2026-07-28 request's path: the same stages without the lifecycle, which has nothing to do in that era:
 * it has no handshake (initialize and ping are refused as removed methods before a request gets here),
 * and the ids a modern request travels under are the gateway's own exchange numbers, never in use twice. Nor
 * the legacy shape: its revision holds any output a tool has.
 */
export const MODERN_REQUEST_STAGES = CLIENT_REQUEST_STAGES.filter((stage) => stage !== lifecycleStage && stage !== legacyShapeStage);

export const modernRequestPipeline = compose(MODERN_REQUEST_STAGES);
