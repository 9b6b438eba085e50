/**
 * Preloaded with `node --import` by test/cli/fast-start.test.ts: appends the URL of every module the
 * process loads to the file HOOKLEDGER_TEST_LOADS names, one a line (the hooks run in a thread of
 * their own; the file is their one way out).
 */
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const file = process.env.HOOKLEDGER_TEST_LOADS;
const hooks = `
  import { appendFileSync } from 'node:fs';
  export async function load(url, context, nextLoad) {
    appendFileSync(${JSON.stringify(file)}, url + '\\n');
    return nextLoad(url, context);
  }
`;
if (file) {
  appendFileSync(file, '');
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
