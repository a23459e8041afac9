/**
 * The W3C Baggage grammar (https://www.w3.org/TR/baggage/#definition) for what OpenTelemetry's baggage
 * propagator passes on unchecked. It decodes and re-encodes a member's key and value, but keeps the
 * member's properties (after ";") as the sender wrote them and re-encodes a key with encodeURIComponent,
 * which leaves "(" and ")" (no token characters) as they are: a client's control characters, or a
 * header-breaking CR LF, would otherwise go on to every upstream in the gateway's own context.
 */

/** RFC 9110 token characters: a key. */
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
/** baggage-octet: a value (printable ASCII but space, '"', ',', ';' and '\'). */
const OCTETS = '[\\x21\\x23-\\x2b\\x2d-\\x3a\\x3c-\\x5b\\x5d-\\x7e]*';
const OWS = '[ \\t]*';
const PROPERTY = `${TOKEN}(?:${OWS}=${OWS}${OCTETS})?`;
const KEY = new RegExp(`^${TOKEN}$`);
const PROPERTIES = new RegExp(`^${OWS}${PROPERTY}(?:${OWS};${OWS}${PROPERTY})*${OWS}$`);

/** Whether a member with this (decoded) key and these properties (the text after its first ";", if any) is well-formed once encoded. */
export function wellFormedMember(key: string, properties: string | undefined): boolean {
  return KEY.test(encodeURIComponent(key)) && (properties === undefined || PROPERTIES.test(properties));
}
