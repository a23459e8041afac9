/**
 * `s` as one word of a POSIX shell command line: as it is when it holds only characters no shell reads
 * specially, else single-quoted (a ' inside closes the quote, adds an escaped one and opens it again).
 * A command the gateway tells an operator to run names tools the upstream chose: "a b; rm -rf ~" or
 * "$(…)" pasted as written split into several arguments, or ran.
 */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
