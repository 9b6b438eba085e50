/**
 * One Lambda function's process (local/assembly/functions.ts forks one per function): loads the
 * bundle named by the template's `Handler` from the asset folder, with the environment the parent
 * built from the template, then runs one invocation per message and answers with its result or
 * error. Plain JavaScript: it must start without tsx, as the bundle does on Lambda.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const codeDir = process.env.HOOKLEDGER_CODE_DIR ?? '';
const handlerSpec = process.env._HANDLER ?? 'index.handler';
const dot = handlerSpec.lastIndexOf('.');
const moduleName = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

async function load() {
  for (const ext of ['.mjs', '.js', '.cjs']) {
    const file = path.join(codeDir, `${moduleName}${ext}`);
    if (existsSync(file)) {
      const mod = await import(pathToFileURL(file).href);
      const fn = mod[exportName] ?? mod.default?.[exportName];
      if (typeof fn !== 'function') throw new Error(`${file} does not export a function named "${exportName}"`);
      return fn;
    }
  }
  throw new Error(`no ${moduleName}.mjs, .js or .cjs in ${codeDir} (Handler ${handlerSpec})`);
}

const handler = load();

process.on('message', async (message) => {
  const { id, event, deadline, requestId } = message;
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: process.env.HOOKLEDGER_FUNCTION_ARN,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const fn = await handler;
    const result = await fn(event, context);
    process.send?.({ id, ok: true, result: result === undefined ? null : result });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    process.send?.({ id, ok: false, error: { name: e.name, message: e.message } });
  }
});

// Ready once the bundle's module scope (its cold start) ran.
handler.then(
  () => process.send?.({ ready: true }),
  (error) => process.send?.({ ready: false, error: { name: error?.name ?? 'Error', message: error?.message ?? String(error) } }),
);
