export const HELM_PACKAGE: string;
export const SCHEMA_PACKAGES: string[];
/** Paths of helm and of the node_modules holding the Kubernetes schema packages, installed once into .cache/chart-tools. */
export function chartTools(root?: string): { helm: string; modules: string };
