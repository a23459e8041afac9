import { GatewayError, toJsonRpcError, type GatewayErrorCode } from '../../errors.js';
import { Cancellation } from '../../jsonrpc/cancellation.js';
import { ErrorCode } from '../../jsonrpc/error-codes.js';
import { JsonRpcError } from '../../jsonrpc/json-rpc-error.js';
import { notFound, withheld } from '../../jsonrpc/not-found.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import { quote } from '../../policy/argument-rules.js';
import type { ConfirmationOutcome } from '../../policy/audit-log.js';
import { confirmationMessage } from '../../policy/confirm-message.js';
import type { ConfirmRule } from '../../policy/confirm-rules.js';
import type { ViewTool } from '../../router/tool-view.js';
import { countUnrouted, type Next, type RequestContext, type Stage } from '../request-pipeline.js';
import { argumentsStage } from './arguments-stage.js';
import { policyStage } from './policy-stage.js';

/**
 * Whether declared client capabilities include form-mode elicitation. An empty `elicitation` object is
 * form mode (2025-06-18, and the 2025-11-25 rule for it); one that lists only `url` is not.
 */
export function declaresFormElicitation(caps: Record<string, any> | undefined): boolean {
  const e = caps?.elicitation;
  return e !== null && typeof e === 'object' && (e.form !== undefined || e.url === undefined);
}

/** The one question asked: a single required boolean, unticked by default. */
const REQUESTED_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    confirm: { type: 'boolean', title: 'Send this tool call', description: 'Tick to let the gateway send the call exactly as shown; leave it unticked, decline or cancel to refuse it.', default: false },
  },
  required: ['confirm'],
});

/** An answer counts as consent only when the user accepted with the box ticked. */
function outcomeOf(answer: Record<string, unknown>): ConfirmationOutcome {
  if (answer.action === 'accept') return (answer.content as { confirm?: unknown } | undefined)?.confirm === true ? 'accepted' : 'declined';
  return answer.action === 'decline' ? 'declined' : 'cancelled';
}

/**
 * The called tool as the caller is shown it (the name is canonical here): the view's tool the exposed name
 * names, null when the view of its upstream has no such tool (the route will answer "not found": nothing
 * would be sent), undefined when that cannot be told (no view, or none of its upstream: listing failed).
 */
async function calledTool(ctx: RequestContext, upstream: string | undefined): Promise<ViewTool | null | undefined> {
  const name = ctx.req.params?.name;
  if (typeof name !== 'string' || upstream === undefined) return undefined;
  try {
    const view = await ctx.host.router!.toolView(ctx.exposedName ?? name);
    if (!view.upstreams.has(upstream)) return undefined;
    const tool = view.named(ctx.exposedName ?? name);
    return tool?.canonical === name ? tool : null;
  } catch {
    return undefined; // the question is asked all the same, its arguments in the order sent
  }
}

/** The tool's declared parameters, in its input schema's order: shown first in the question. */
function declaredParameters(tool: ViewTool | undefined): string[] | undefined {
  const properties = (tool?.raw.inputSchema as { properties?: unknown } | undefined)?.properties;
  return properties !== null && typeof properties === 'object' && !Array.isArray(properties) ? Object.keys(properties) : undefined;
}

/**
 * The rule of the hidden-text screen (set on the request by a later stage) that withholds the tool from the
 * caller: the route will answer such a call "not found", so the user is not asked to approve it.
 */
function withheldBy(ctx: RequestContext, tool: ViewTool): string | undefined {
  const screen = ctx.host.endpoint.hiddenText.for(ctx.host.guard.tenant);
  if (screen === undefined || screen.definitions === 'off') return undefined;
  return screen.show('tool', tool.upstream, tool.raw) === undefined ? screen.rule : undefined;
}

/**
 * What the route will refuse the call with whatever the user says, if it will: then the user is not asked.
 * A name the caller is not shown (`null`): as an unknown tool, even one an upstream lists by then. A tool the
 * hidden-text screen withholds: as unknown, though the upstream cleaned it meanwhile (that was not what the
 * user would have been asked about). A tool tool pinning withholds (before 2026-12-07 asked, then refused):
 * with pinning's own error and audit rule, though an operator approves it meanwhile. Undefined where it
 * cannot be told now (no view of the tools, pinning's store failing): the user is asked, the route decides.
 */
async function refusedAnyway(ctx: RequestContext, tool: string, called: ViewTool | null | undefined): Promise<Error | undefined> {
  if (called === null) return notFound('tool', tool);
  if (called === undefined) return undefined;
  const screened = withheldBy(ctx, called);
  if (screened !== undefined) return withheld('tool', String(ctx.req.params?.name), screened);
  return ctx.host.router!.pinRefusal(called).catch(() => undefined);
}

function question(ctx: RequestContext, rule: ConfirmRule, tool: string, upstream: string | undefined, declared: string[] | undefined): Record<string, unknown> {
  const { host, req } = ctx;
  const message = confirmationMessage({ tool, upstream, message: rule.message, arguments: req.params?.arguments, declared });
  const params: Record<string, unknown> = { message, requestedSchema: REQUESTED_SCHEMA };
  // `mode` exists from 2025-11-25 on (absent means form); older clients are not shown a field they do not know.
  if (host.era === 'modern' || (host.session?.protocolVersion ?? '') >= '2025-11-25') params.mode = 'form';
  return params;
}

const NOTHING_SENT = 'nothing was sent to the upstream';

/**
 * The rule as the client is told it: its glob, written over canonical names, unless the call came by a
 * curation rename, whose canonical name the glob may spell out (`fs__delete_repo` for `drop_repo`): then no
 * glob, as every other refusal of such a call names nothing but the rename (the audit line keeps the rule).
 */
function shownRule(ctx: RequestContext, rule: ConfirmRule): string | undefined {
  const exposed = ctx.exposedName;
  return exposed !== undefined && ctx.host.router!.curation.renameOf(String(ctx.req.params?.name)) === exposed ? undefined : rule.match;
}

function refusal(outcome: Exclude<ConfirmationOutcome, 'accepted'>, shown: string | undefined, tool: string, timeoutMs: number): { code: GatewayErrorCode; message: string } {
  const named = `tool ${quote(tool)} (${shown === undefined ? 'a confirmation rule' : `confirmation rule ${quote(shown)}`})`;
  switch (outcome) {
    case 'declined':
      return { code: 'SWB_CONFIRMATION_DECLINED', message: `The user declined the call of ${named}; ${NOTHING_SENT}` };
    case 'cancelled':
      return { code: 'SWB_CONFIRMATION_DECLINED', message: `The confirmation of the call of ${named} was cancelled; ${NOTHING_SENT}` };
    case 'timeout':
      return { code: 'SWB_CONFIRMATION_TIMEOUT', message: `No answer to the confirmation of the call of ${named} within ${timeoutMs} ms; ${NOTHING_SENT}` };
    case 'unsupported':
      return {
        code: 'SWB_CONFIRMATION_UNSUPPORTED',
        message: `The call of ${named} needs the user's confirmation, and this client did not declare the elicitation capability (form mode) to ask for it; ${NOTHING_SENT}. Use a client that supports elicitation`,
      };
  }
}

/** A call the user did not consent to: audited, counted, answered with a coded error. Nothing is forwarded. */
function refuse(ctx: RequestContext, rule: ConfirmRule, outcome: Exclude<ConfirmationOutcome, 'accepted'>, tool: string, upstream: string | undefined): JsonRpcResponse {
  const { req, host } = ctx;
  host.guard.unconfirmed(req.params, rule, outcome, ctx.startedAt, upstream);
  countUnrouted(ctx, 'denied', 'unknown');
  const shown = shownRule(ctx, rule);
  const { code, message } = refusal(outcome, shown, tool, rule.timeoutMs);
  const data: Record<string, unknown> = shown === undefined ? { tool, outcome } : { rule: shown, tool, outcome };
  if (upstream !== undefined) data.upstream = upstream;
  const wire = toJsonRpcError(new GatewayError(code, message, data), host.logger);
  // The 2026-07-28 era has its own answer for a capability the request did not declare (HTTP 400).
  if (outcome === 'unsupported' && host.era === 'modern') return new JsonRpcError(ErrorCode.MissingRequiredClientCapability, message, { ...(wire.data as object), requiredCapabilities: { elicitation: { form: {} } } }).toResponse(req.id);
  return wire.toResponse(req.id);
}

async function confirm(ctx: RequestContext, next: Next, rule: ConfirmRule): Promise<JsonRpcResponse | undefined> {
  const { req, host } = ctx;
  const tenant = host.guard.tenant.name;
  const upstream = host.router!.upstreamOf(req.method, req.params, ctx.spec);
  const tool = ctx.exposedName ?? String(req.params?.name);
  const called = await calledTool(ctx, upstream);
  const refusal = await refusedAnyway(ctx, tool, called);
  if (refusal !== undefined) {
    // Not put to the user, and never forwarded: the route refuses the call with this, whatever definition it finds by then.
    const refused = () => {
      throw refusal;
    };
    ctx.checkDefinition = refused;
    return next(ctx);
  }
  if (!host.canElicit(req.id)) {
    host.observer.confirmation(tenant, 'unsupported');
    if (rule.ifUnsupported === 'refuse') return refuse(ctx, rule, 'unsupported', tool, upstream);
    ctx.confirmation = 'unsupported';
    return next(ctx);
  }
  // While the user thinks, the call is in flight: the client can cancel it, a closing session ends it.
  const cancel = (ctx.cancel ??= new Cancellation());
  host.inflight.set(req.id, cancel);
  let outcome: ConfirmationOutcome;
  try {
    outcome = outcomeOf(await host.elicit(question(ctx, rule, tool, upstream, declaredParameters(called ?? undefined)), req.id, cancel, rule.timeoutMs));
  } catch (err) {
    outcome = err instanceof JsonRpcError && err.code === ErrorCode.RequestTimeout ? 'timeout' : 'cancelled';
  }
  host.observer.confirmation(tenant, outcome);
  if (outcome === 'accepted') {
    ctx.confirmation = outcome;
    return judgedAgain(ctx, next, tool, upstream);
  }
  // Not accepted: the request ends here (an accepted one stays in flight on its way to the route).
  host.inflight.delete(req.id);
  if (!cancel.aborted) return refuse(ctx, rule, outcome, tool, upstream);
  // Cancelled by the client (it expects no answer) or by the session's end (answered already).
  host.guard.unconfirmed(req.params, rule, outcome, ctx.startedAt, upstream, 'cancelled');
  countUnrouted(ctx, 'cancelled', 'unknown');
  host.release(req.id);
  return undefined;
}

/**
 * An accepted call, judged again by the config in force once the user answered: a person may take minutes,
 * and a reload meanwhile may have denied the tool to the tenant, excluded it from the endpoint, added an
 * argument rule or changed what pinning or the hidden-text screen withholds. Judged only before the question
 * (before 2026-12-07), the call was sent by rules no longer in force, in both eras. Refused as its stage
 * refuses it (an unknown tool, an argument refusal, pinning's error); never sent.
 */
async function judgedAgain(ctx: RequestContext, next: Next, tool: string, upstream: string | undefined): Promise<JsonRpcResponse | undefined> {
  const refusal = await refusedAnyway(ctx, tool, await calledTool(ctx, upstream));
  if (refusal !== undefined) {
    // Declared, then stored (see confirm): the route refuses the call with it, whatever definition it finds.
    const refused = () => {
      throw refusal;
    };
    ctx.checkDefinition = refused;
  }
  let passed = false;
  const answer = await policyStage(ctx, (c) =>
    argumentsStage(c, (judged) => {
      passed = true;
      return next(judged);
    }),
  );
  // Refused here: the request is over (on its way on, the route takes it out of flight).
  if (!passed) ctx.host.inflight.delete(ctx.req.id);
  return answer;
}

/**
 * The tenant's confirmation rules: a tools/call one of them matches is forwarded only once the user,
 * asked through elicitation, accepted it, and then exactly as it was shown. After the argument rules
 * (a call they refuse is never put to the user), before limits (a person thinking holds no slot) and
 * the route. A tenant without rules pays one property read.
 */
export const confirmStage: Stage = (ctx, next) => {
  const { req, host } = ctx;
  if (host.guard.tenant.confirmRules === undefined || req.method !== 'tools/call') return next(ctx);
  const rule = host.guard.confirmRule(req.params, host.endpoint.prefixNames ? undefined : host.endpoint.pools[0]?.name);
  return rule ? confirm(ctx, next, rule) : next(ctx);
};
