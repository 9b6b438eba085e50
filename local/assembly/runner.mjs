/**
 * One Lambda function's process (local/assembly/functions.ts forks one per function): loads the
 * bundle named by the template's `Handler` from the asset folder, with the environment the parent
 * built from the template, then runs one invocation per message and answers with its result or
 * error. Plain JavaScript: it must start without tsx, as the bundle does on Lambda. So it raises
 * nothing of its own: every failure crosses to the parent as `{ name, message }`, and the parent
 * raises it as a FunctionError (its `errorName` Lambda's error type, or the thrown error's name).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const codeDir = process.env.HOOKLEDGER_CODE_DIR ?? '';
const handlerSpec = process.env._HANDLER ?? 'index.handler';
const dot = handlerSpec.lastIndexOf('.');
const moduleName = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

/**
 * Why a cold start found no handler, under the error types Lambda's Node.js runtime reports for the
 * same faults. Reports, not Error subclasses: this file cannot import the hierarchy (core/errors.ts
 * is TypeScript), and a failure here only travels to the parent as `{ name, message }`, which raises
 * it as a typed FunctionError (functions.ts).
 */
const importModuleError = (message) => ({ name: 'Runtime.ImportModuleError', message });
const handlerNotFound = (message) => ({ name: 'Runtime.HandlerNotFound', message });

/** What crosses to the parent of anything thrown: its name and message (a thrown non-Error reads as Error). */
function report(error) {
  if (error !== null && typeof error === 'object' && typeof error.name === 'string' && typeof error.message === 'string') {
    return { name: error.name, message: error.message };
  }
  return { name: 'Error', message: String(error) };
}

/** `{ fn }`, the handler, or `{ failure }`: no module, no such export, or the bundle's module scope threw. */
async function load() {
  const file = ['.mjs', '.js', '.cjs'].map((ext) => path.join(codeDir, `${moduleName}${ext}`)).find((f) => existsSync(f));
  if (!file) {
    return {
      failure: importModuleError(
        `no ${moduleName}.mjs, .js or .cjs in ${codeDir} (Handler ${handlerSpec}); synthesize the assembly again (cdk synth) or fix the function's Handler`,
      ),
    };
  }
  const mod = await import(pathToFileURL(file).href);
  const fn = mod[exportName] ?? mod.default?.[exportName];
  if (typeof fn !== 'function') {
    return {
      failure: handlerNotFound(
        `${file} does not export a function named "${exportName}"; fix the function's Handler (${handlerSpec}) or its bundle's export`,
      ),
    };
  }
  return { fn };
}

const loaded = load().catch((error) => ({ failure: report(error) }));

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
  const { fn, failure } = await loaded;
  if (failure) {
    process.send?.({ id, ok: false, error: failure });
    return;
  }
  try {
    const result = await fn(event, context);
    process.send?.({ id, ok: true, result: result === undefined ? null : result });
  } catch (error) {
    process.send?.({ id, ok: false, error: report(error) });
  }
});

// Ready once the bundle's module scope (its cold start) ran.
loaded.then(({ failure }) => process.send?.(failure ? { ready: false, error: failure } : { ready: true }));
