/** The Node version of the Dockerfile's default NODE_IMAGE. */
export function dockerfileNodeVersion(root?: string): string;
/** The base image's tag for the current inputs, and the Node version in it. */
export function baseTag(root?: string): { tag: string; node: string };
/** The base's tag, built into podman's store first when it is not there. */
export function ensureBase(root?: string): { tag: string; built: boolean };
