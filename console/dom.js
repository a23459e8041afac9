// A small DOM builder: elements are made with createElement and text with text nodes, never parsed
// from HTML strings, so tool descriptions and audit lines (which come from upstreams and clients) can never become markup.

/** h('button', { type: 'button', onclick: fn, class: 'x' }, 'text', child, [more]) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces an element's content, keeping the focused control's place when it is rebuilt with the same id. */
export function fill(el, ...children) {
  const focused = document.activeElement?.id;
  el.replaceChildren();
  append(el, children);
  if (focused && el.querySelector(`#${CSS.escape(focused)}`)) document.getElementById(focused).focus();
}

/** A table with a caption (for screen readers), header cells and rows of cells. */
export function table(caption, headers, rows) {
  return h('table', {}, h('caption', { class: 'visually-hidden' }, caption), h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, rows));
}

/**
 * The admin API's line diff ("  ", "- ", "+ " lines) as two aligned columns: the approved definition on
 * the left, the pending one on the right; a run of removed lines is paired with the added run after it.
 */
export function sideBySide(diff) {
  const rows = [];
  let minus = [];
  let plus = [];
  const flush = () => {
    for (let i = 0; i < Math.max(minus.length, plus.length); i++) rows.push([minus[i], plus[i]]);
    minus = [];
    plus = [];
  };
  for (const line of diff) {
    if (line.startsWith('- ')) minus.push({ text: line.slice(2), kind: 'del' });
    else if (line.startsWith('+ ')) plus.push({ text: line.slice(2), kind: 'ins' });
    else {
      flush();
      rows.push([{ text: line.slice(2), kind: 'same' }, { text: line.slice(2), kind: 'same' }]);
    }
  }
  flush();
  const cell = (c, side) => h('td', { class: c ? c.kind : 'empty' }, c ? h('span', { class: 'visually-hidden' }, c.kind === 'del' ? 'removed: ' : c.kind === 'ins' ? 'added: ' : '') : null, c ? c.text : '', side);
  return h('div', { class: 'scroll' }, table('Definition diff', ['Approved', 'Pending'], rows.map(([l, r]) => h('tr', {}, cell(l), cell(r)))));
}
