/**
 * The esbuild plugins of the handler bundles, in plain JavaScript: CDK bundles synchronously
 * (`tryBundle`), esbuild runs plugins only in its asynchronous API, so a bundle that needs one is
 * built in a child process (./bundle-runner.mjs) that imports them from here.
 */

/** The module that stands for the SDK's credential chain inside the Secrets Manager client. */
const NO_DEFAULT_CREDENTIALS = `export const defaultProvider = () => async () => {
  throw new Error('hookledger: this bundle gives the Secrets Manager client no credential chain of its own; build the client with credentials (lambdas/ingest/first-request.ts passes the DynamoDB client\\'s)');
};
`;

/**
 * Intake's Secrets Manager client is built with the DynamoDB client's credentials, so its own import
 * of the SDK's credential chain is answered by a stand-in that throws if ever called. Without this,
 * the chain (imported by both clients) is code splitting's one module set shared by the cold start and
 * the first-request chunk: a file of its own at every cold start, which Node 22 charges several ms for.
 */
function secretsClientSharesCredentials() {
  return {
    name: 'secrets-client-shares-credentials',
    setup(build) {
      build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, (args) =>
        /[\\/]node_modules[\\/]@aws-sdk[\\/]client-secrets-manager[\\/]/.test(args.importer)
          ? { path: 'credential-provider-node', namespace: 'hookledger-no-default-credentials' }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'hookledger-no-default-credentials' }, () => ({
        contents: NO_DEFAULT_CREDENTIALS,
        loader: 'js',
      }));
    },
  };
}

const PLUGINS = { 'secrets-client-shares-credentials': secretsClientSharesCredentials };

/** The plugins of these names, in order; an unknown name is refused with the known ones. */
export function pluginsNamed(names) {
  return names.map((name) => {
    const plugin = PLUGINS[name];
    if (!plugin) throw new Error(`no bundling plugin "${name}"; known: ${Object.keys(PLUGINS).join(', ')}`);
    return plugin();
  });
}
