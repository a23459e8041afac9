// Text that came from outside (an upstream's tool names and definitions, a token's subject), printed by
// the CLI on an operator's terminal. An ESC or C1 sequence in a tool name could otherwise rewrite the
// screen (hide a line, retitle the window) while the operator reviews what to approve; a bidi override
// or an invisible format character could make one name look like another.

/** What JSON.stringify leaves as it is but a terminal acts on or hides: DEL, C1, format characters (bidi, zero-width, tags), line and paragraph separators. */
const UNESCAPED = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
/** A name printed bare must be all visible characters: none of the above, no control or space, no quote or backslash. */
const NOT_BARE = /[\p{Cc}\p{Cf}\p{Z}\s"\\]/u;

const hex = (c: string) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/** JSON text (from JSON.stringify) with every character a terminal would act on or hide escaped as \uXXXX; still the same JSON. */
export function terminalJson(json: string): string {
  return json.replace(UNESCAPED, hex);
}

/** The text as it is when it is all visible characters, else as a JSON string with every control and format character escaped. */
export function terminalText(text: string): string {
  return text !== '' && !NOT_BARE.test(text) ? text : terminalJson(JSON.stringify(text));
}

/** A message (spaces and quotes kept) with every control and format character escaped as \uXXXX, a newline too: one line. */
export function terminalLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, hex);
}
