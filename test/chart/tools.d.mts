export const HELM_PACKAGE: string;
export const SCHEMA_PACKAGES: string[];
export const COMPOSE_PACKAGE: string;
/** Paths of helm, the node_modules holding the Kubernetes schema packages and the Compose schema, installed once into .cache/chart-tools. */
export function chartTools(root?: string): { helm: string; modules: string; composeSchema: string };
