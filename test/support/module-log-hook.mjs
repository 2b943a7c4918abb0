// Loaded with `node --import`: appends the URL of every module the process loads to the file
// named by TEAMINFRA_TEST_MODULE_LOG, so that a test can say what a command loads at start.
import { register } from 'node:module';

register(`data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
const log = process.env.TEAMINFRA_TEST_MODULE_LOG;
export async function load(url, context, next) {
  if (log) appendFileSync(log, url + '\\n');
  return next(url, context);
}
`)}`);
