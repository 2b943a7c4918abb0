// The "preinstall" script of `npm install` and `npm ci`, run on whatever Node the machine has. On a
// Node older than package.json's engines, teaminfra would install and then crash (better-sqlite3
// 13 and oidc-provider 9 need Node 22), so the install fails here with one sentence instead. npm 7
// and later run a project's own preinstall only once its dependencies are in place (downloaded and
// their addons built), before our own build (prepare): that is as early as a script of ours can run.
// Written for old Nodes on purpose: no dependencies, nothing newer than ES5 (`var`, no arrows).
'use strict';
var fs = require('fs');
var path = require('path');

/** The lowest major Node version package.json's engines range (">=22") accepts. */
function requiredMajor(range) {
  var match = /^>=\s*(\d+)/.exec(range);
  if (!match) throw new Error('package.json engines.node must read ">=N", not "' + range + '"');
  return Number(match[1]);
}

/** The sentence refusing `found`, or undefined if it may install. */
function refusal(found, range, command) {
  var needed = requiredMajor(range);
  if (Number(found.split('.')[0]) >= needed) return undefined;
  return 'teaminfra needs Node.js ' + needed + ' or newer (engines ' + range + ') but `npm ' + command +
    '` is running on Node.js ' + found + ': install Node 24 LTS (for example `npm install -g node@24`, ' +
    'or from https://nodejs.org) and run `npm ' + command + '` again.';
}

module.exports = { refusal: refusal };

if (require.main === module) {
  var manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  var sentence = refusal(process.versions.node, manifest.engines.node, process.env.npm_command || 'install');
  if (sentence) {
    console.error(sentence);
    process.exit(1);
  }
}
