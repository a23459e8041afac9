import { term } from './search-terms.js';

// People ask for a task in their words, tools describe themselves in theirs: "make a folder" has to
// meet create_directory, "forget X" delete_entities, "kill the job" terminate_process. Each group holds
// words that name the same action or thing in tool catalogues generally (not in any one server); a query
// word also searches for the others of every group it is in, at a lower weight than the word itself.
// Two words that name one thing together ("pull request", "set up") are written as one, with '+'.
const GROUPS: readonly string[] = [
  // Actions
  'create make new add start open build generate set+up register post',
  'show list get fetch view display read retrieve see look browse dump print enumerate pull+up',
  'find search look locate query lookup grep discover where which anywhere',
  'delete remove erase drop destroy forget discard purge trash wipe clear unset get+rid',
  'update edit change modify replace patch swap alter rewrite adjust tweak fix set',
  'rename move relocate',
  'copy duplicate clone',
  'save write store persist put record',
  'append insert add leave',
  'run execute exec launch invoke call start spawn fire',
  'stop kill terminate end cancel abort halt quit interrupt close',
  'send post message say tell notify notification share',
  'reply respond answer comment',
  'compare diff difference changed',
  'undo revert reset rollback restore discard',
  'upload attach',
  'download save fetch',
  'click press tap hit push select choose',
  'type fill enter input write',
  'navigate visit go open browse load',
  'scroll hover drag drop',
  'remember memorize memorise note keep know memory knowledge observation fact entity',
  'assign give allocate',
  'close resolve complete finish done',
  'archive hide',
  'merge combine integrate',
  'sync pull fetch refresh',
  'count many number total',
  'feedback rate rating review opinion useless helpful report',
  'reopen unarchive restore back undo put+back',
  'remind reminder todo task',
  'evaluate eval javascript js script code execute',
  'react reaction emoji',
  'press key keyboard enter',
  'context cluster switch point use current',
  'note comment observation annotation remark',
  'mark flag set update status',
  'summarize summarise describe explain details info information about metadata properties stat why',
  'more next batch page pagination paginate continue remaining rest',
  'active running ongoing progress pending live current',
  'toggle switch enable disable turn+on turn+off switch+on switch+off activate deactivate',
  'fake simulate simulated mock dummy',
  'watch monitor track observe follow subscribe',
  'aggregate sum total average statistic stats',
  // Things
  'field column attribute property schema structure',
  'readme file content contents',
  'content contents contain detail details show',
  'news latest web internet online search',
  'drive driving walk walking directions distance commute route travel',
  'hours phone opening contact details',
  'session history recent previous',
  'row record entry entries item',
  'folder directory dir path',
  'file document doc',
  'repository repo project codebase',
  'pull+request pr merge+request mr',
  'issue bug ticket problem',
  'task todo item chore',
  'error exception crash failure fail problem bug stack+trace',
  'log logs output printed console stdout',
  'process program job proces pid',
  'page webpage site website web url link',
  'screenshot image picture photo png jpg capture snapshot',
  'table database db sql schema column row record collection',
  'user member person people account profile who',
  'workspace team organization org company',
  'match result',
  'network traffic http request api+call',
  'channel room conversation thread chat',
  'message msg post dm',
  'size big large space bytes disk heavy',
  'history previous past last recent earlier before',
  'status state health check green passing ci pipeline workflow build',
  'schedule calendar due deadline reminder date',
  'label tag',
  'documentation docs reference manual guide api',
  'place location address venue spot nearby',
  'direction route way navigate distance travel',
  'configuration config settings setting options',
  'container pod deployment cluster',
  'secret token credential key password',
  'term word phrase text string',
];

/**
 * A group's word, or a phrase written with '+' ("pull+request") as the one term that a query's and a
 * name's adjacent words join into (see pairsOf in tool-index): a phrase is a unit, not two synonyms.
 */
function phraseTerm(w: string): string | null {
  if (!w.includes('+')) return term(w);
  const joined = w.split('+').map((p) => term(p) ?? p).join('');
  return term(joined) ?? joined;
}

/** Each term (as indexed) to the other terms its groups give it. */
const EXPANSIONS: ReadonlyMap<string, readonly string[]> = (() => {
  const by = new Map<string, Set<string>>();
  for (const g of GROUPS) {
    const terms = [...new Set(g.split(' ').map(phraseTerm).filter((t): t is string => t !== null))];
    for (const t of terms) {
      let s = by.get(t);
      if (!s) by.set(t, (s = new Set()));
      for (const o of terms) if (o !== t) s.add(o);
    }
  }
  return new Map([...by].map(([t, s]) => [t, [...s]]));
})();

/** The terms that stand in for a query term besides itself (none for a word in no group). */
export function synonymsOf(t: string): readonly string[] {
  return EXPANSIONS.get(t) ?? [];
}
