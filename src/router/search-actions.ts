import { term } from './search-terms.js';

// What a tool's name says it does to things (creates, deletes, reads), against what a task asks: a task
// that asks for no change, or asks a question, is more often served by a tool that reads than by its
// sibling that creates or deletes the same thing.

/** The search terms of a list of words (stemmed as the index stems them), as a set. */
function termSet(list: string): ReadonlySet<string> {
  return new Set(
    list
      .trim()
      .split(/\s+/)
      .map(term)
      .filter((t): t is string => t !== null),
  );
}

/**
 * Verbs that change something (see UNASKED_CHANGE). Verbs only: a word that is as often a thing ("message", "comment", "note") would count as asked for
 * whenever a task names that thing.
 */
const CHANGES = termSet(`
  create make add delete remove erase drop destroy purge trash wipe clear unset update edit change modify replace patch set
  rename move copy duplicate clone save write store put append insert run execute exec launch invoke start spawn stop kill
  terminate cancel abort close send post reply upload click press type fill merge assign archive unarchive reopen restore
  revert reset undo mark toggle enable disable push commit complete`);

/** Changes that destroy: what cannot be taken back (see UNASKED_DESTROY). */
const DESTROYS = termSet('delete remove erase drop destroy purge trash wipe clear unset kill terminate');

/** Verbs that read: what a name that starts with one does (list_commits, get_completed_tasks) is read. */
const READS = termSet('get list read show view fetch find search query describe count retrieve explain check inspect lookup browse');

/**
 * What a tool named for a change (create_labels, delete_observations, update_issue) keeps of its score
 * when the task says neither that change nor a synonym of it: a question ("which labels do I use?",
 * "what fields does the table have?") is more often served by the tool that reads than by one that
 * creates or deletes the same thing. Measured on the corpus: 0.9; 0.7 and below push down the tools of
 * tasks phrased in verbs the synonym groups do not know ("watch this page" for a monitor's create,
 * "cut a branch", "raise an issue").
 */
const UNASKED_CHANGE = 0.9;

/**
 * What a tool named for a change that destroys (delete_observations, drop-index, kill_process) keeps of
 * its score, on top of UNASKED_CHANGE, when the task says none of its destroying verbs nor a synonym:
 * "note down that…" is for add_observations, not for its sibling that deletes them. A task that wants
 * something gone says so. Measured on the corpus (tuning half): 0.9; 0.8 to 0.5 rank the same.
 */
const UNASKED_DESTROY = 0.9;

/**
 * What a tool whose name's verb is a change (see NameAction) keeps of its score when the task is a
 * question (see isQuestion): a question is answered by reading, whatever its words ("what issues are
 * still open?" is not for create_issue, "what's stored under this key?" not for set). Stronger than
 * UNASKED_CHANGE because a question that says a change verb still asks to read ("are my searches still
 * running?"). Measured on the corpus (tuning half): 0.5; 0.8 and 0.6 gain less, 0.4 no more.
 */
const QUESTION_CHANGE = 0.5;

/** What a tool's name says it changes. */
export interface NameAction {
  /** Its terms that name a change (see CHANGES), and of those the ones that destroy (see DESTROYS). */
  changes: readonly string[];
  destroys: readonly string[];
  /**
   * Whether its verb is a change: the first of its terms that is a verb at all (create_issue,
   * browser_close yes; list_commits, get_completed_tasks no, whatever else they say).
   */
  verbChanges: boolean;
}

/** A name's action, from its terms in order. */
export function actionOf(nameTerms: readonly string[]): NameAction {
  const changes = [...new Set(nameTerms.filter((t) => CHANGES.has(t)))];
  const verb = nameTerms.find((t) => CHANGES.has(t) || READS.has(t));
  return { changes, destroys: changes.filter((t) => DESTROYS.has(t)), verbChanges: verb !== undefined && CHANGES.has(verb) };
}

/** What a tool keeps of its score for what its name changes, given the task's terms and whether it asks a question. */
export function actionWeight(a: NameAction, asked: ReadonlyMap<string, unknown>, question: boolean): number {
  let w = 1;
  if (a.changes.length > 0 && !a.changes.some((c) => asked.has(c))) w *= UNASKED_CHANGE;
  if (a.destroys.length > 0 && !a.destroys.some((c) => asked.has(c))) w *= UNASKED_DESTROY;
  if (question && a.verbChanges) w *= QUESTION_CHANGE;
  return w;
}
