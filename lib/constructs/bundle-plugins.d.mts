import type { Plugin } from 'esbuild';

export type BundlePluginName = 'secrets-client-shares-credentials';
export function pluginsNamed(names: readonly BundlePluginName[]): Plugin[];
