export { Authenticator, type CredentialInput } from './authenticator.js';
export { AuthError } from './auth-error.js';
export { ANONYMOUS, samePrincipal, type Principal } from './principal.js';
export { readPublicJwks } from './key-source.js';
