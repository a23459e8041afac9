/** Path of a Node binary of exactly this major (the running one, or one installed once into .cache/node<major>). */
export function nodeBinary(major: number, root?: string): string;
/** Path of a Node binary of at least this major. */
export function nodeAtLeast(major: number, root?: string): string;
