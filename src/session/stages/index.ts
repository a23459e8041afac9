import { compose } from '../request-pipeline.js';
import { argumentsStage } from './arguments-stage.js';
import { confirmStage, declaresFormElicitation } from './confirm-stage.js';
import { hiddenTextStage } from './hidden-text-stage.js';
import { lifecycleStage } from './lifecycle-stage.js';
import { limitsStage } from './limits-stage.js';
import { observeStage } from './observe-stage.js';
import { policyStage } from './policy-stage.js';
import { routeStage } from './route-stage.js';
import { toolsStage } from './tools-stage.js';
import { traceStage } from './trace-stage.js';

export { declaresFormElicitation };
export { argumentsStage, confirmStage, hiddenTextStage, lifecycleStage, limitsStage, observeStage, policyStage, routeStage, toolsStage, traceStage };

/**
 * A client request's path: (trace around) lifecycle → tools (exposed names, meta-tools) → policy → argument rules →
 * confirmation → limits → (observe around) hidden text → route. Observe wraps the rest so it sees the outcome; each
 * refusal before it reports its own metrics.
 */
export const CLIENT_REQUEST_STAGES = [traceStage, lifecycleStage, toolsStage, policyStage, argumentsStage, confirmStage, limitsStage, observeStage, hiddenTextStage, routeStage] as const;

export const clientRequestPipeline = compose(CLIENT_REQUEST_STAGES);
