import { GatewayError } from '../errors.js';

/** Why a requestState was refused. Only the category reaches the client, never what was inside the state. */
export type RequestStateRejection = 'malformed' | 'tampered' | 'expired' | 'wrong-principal' | 'wrong-request' | 'replayed';

// Each message says what to do next. A refused state is never repaired or forwarded: the client starts
// the request over (without requestState and inputResponses), which is always safe to do.
const MESSAGES: Record<RequestStateRejection, string> = {
  malformed: 'requestState is not a state this gateway issued; send the request again without requestState and inputResponses',
  tampered:
    'requestState failed its integrity check (it was altered, or sealed with a key this gateway no longer holds); send the request again without requestState and inputResponses',
  expired: 'requestState has expired; send the request again without requestState and inputResponses',
  'wrong-principal': 'requestState was issued to another caller; send the request again without requestState and inputResponses',
  'wrong-request': 'requestState belongs to a different request: retry with the same method, name or URI and arguments as the request that returned it',
  replayed: 'requestState was already used (each input_required round accepts its state once); send the request again without requestState and inputResponses',
};

/** A retry's requestState refused: -32602 (Invalid params) on the wire, HTTP 400, `data.reason` the category. */
export class RequestStateError extends GatewayError {
  readonly reason: RequestStateRejection;

  constructor(reason: RequestStateRejection) {
    super('SWB_REQUEST_STATE_INVALID', MESSAGES[reason], { reason });
    this.name = 'RequestStateError';
    this.reason = reason;
  }
}
