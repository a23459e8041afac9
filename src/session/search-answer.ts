import { clipped } from '../observability/clipped.js';
import { ANSWER_FRAME as FRAME } from '../router/meta-tools.js';

type Result = Record<string, unknown>;

/** Room kept for the note (and the JSON around it) once something must give way: the note is at most about 350 characters. */
const NOTE_ROOM = 512;
/** What a match that does not fit in full keeps of its title and description. */
const TRIMMED_TEXT = 200;

/** search_tools' answer: the matches it returns, its JSON text, and the note it carries when it was cut. */
export interface SearchAnswer {
  tools: Result[];
  note: string | undefined;
  text: string;
}

/** A match without its input schema and with its texts cut: enough for a model to know it is there, and to ask for it alone. */
function trimmed(t: Result): Result {
  const out: Result = { name: t.name };
  if (typeof t.title === 'string') out.title = clipped(t.title, TRIMMED_TEXT);
  if (typeof t.description === 'string') out.description = clipped(t.description, TRIMMED_TEXT);
  out.schemaOmitted = true;
  return out;
}

/**
 * The matches (best first, each as search_tools returns it) in an answer whose JSON text is at most
 * `maxChars` characters (tools.maxSearchAnswerChars): a few tools with huge input schemas made one answer
 * of any size, all of it read by the model. Every match when they fit; else, in rank order, each match in
 * full while it fits, one that does not without its input schema (`schemaOmitted`), and one that fits
 * neither way left out, the note saying how many of each. Each match is serialized once: the text is joined from those.
 */
export function searchAnswer(found: readonly Result[], maxChars: number): SearchAnswer {
  const parts = found.map((t) => JSON.stringify(t));
  const whole = parts.reduce((n, p) => n + p.length + 1, FRAME - 1);
  if (whole <= maxChars) return { tools: [...found], note: undefined, text: `{"tools":[${parts.join(',')}]}` };
  let room = maxChars - NOTE_ROOM - FRAME;
  const tools: Result[] = [];
  const kept: string[] = [];
  let cut = 0;
  let dropped = 0;
  const take = (t: Result, json: string) => {
    if (json.length + 1 > room) return false;
    room -= json.length + 1;
    tools.push(t);
    kept.push(json);
    return true;
  };
  found.forEach((t, i) => {
    if (take(t, parts[i]!)) return;
    const short = trimmed(t);
    if (take(short, JSON.stringify(short))) cut++;
    else dropped++;
  });
  const note =
    `This answer is cut to ${maxChars} characters (tools.maxSearchAnswerChars): ${cut} match${cut === 1 ? ' is' : 'es are'} listed without ` +
    `${cut === 1 ? 'its' : 'their'} input schema ("schemaOmitted": search for its name alone to see it) and ${dropped} more left out.`;
  return { tools, note, text: `{"tools":[${kept.join(',')}],"note":${JSON.stringify(note)}}` };
}
