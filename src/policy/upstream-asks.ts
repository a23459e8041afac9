import { GATEWAY_VOICE } from './confirm-message.js';

/**
 * Characters a client renders as nothing or that only change how text reads (format, default-ignorable,
 * C1 controls, line and paragraph separators): left out before the gateway's wording is looked for, so that
 * "Switch\u200bboard asks you" is found as what the user reads.
 */
const UNSEEN = /[\u007f-\u009f\u2028\u2029\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** Text as it reads: compatibility forms folded (full-width letters), unseen characters out, spaces collapsed, one case. */
const asRead = (s: string): string => s.normalize('NFKC').replace(UNSEEN, '').replace(/\s+/gu, ' ').toLowerCase();

const VOICE = asRead(GATEWAY_VOICE);

/** How deep an elicitation's form is read (a form is flat: properties of primitive fields; deeper is no form). */
const MAX_DEPTH = 6;

function wordingIn(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return asRead(value).includes(VOICE) ? path : undefined;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = wordingIn(v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Where an upstream's elicitation (its message, its form's titles, descriptions and choices) speaks in the
 * gateway's own voice (GATEWAY_VOICE, as it reads), if anywhere. Only the gateway's confirmation questions
 * open so: one from an upstream that does is a copy of them, made to be taken for them (and approve a
 * call, or give a secret, on the gateway's authority).
 */
export function gatewayWordingIn(params: Record<string, unknown>): string | undefined {
  return wordingIn(params.message, 'message', 0) ?? wordingIn(params.requestedSchema, 'requestedSchema', 0);
}

/**
 * An upstream's elicitation as its user is shown it: its message opened by the upstream that asks
 * (`Upstream "github" asks: …`), so that no upstream's question reads as the gateway's, whose own open
 * with GATEWAY_VOICE. One without a message (or with one that is not text) says what its mode asks, so
 * marked: a URL one was shown a client's or the gateway's default alone ("Open this link to continue"),
 * a link from no one. Anything else in it is relayed as it is.
 */
export function attributedAsk(upstream: string | undefined, params: Record<string, unknown>): Record<string, unknown> {
  // Without a message (the protocol asks for one): what its mode asks, said for it.
  const said = typeof params.message === 'string' ? params.message : params.mode === 'url' ? 'Open this link to continue' : 'Answer this request';
  const who = upstream === undefined ? 'An upstream server' : `Upstream ${JSON.stringify(upstream)}`;
  return { ...params, message: `${who} asks: ${said}` };
}
