// Preloaded (NODE_OPTIONS=--require) into a `teaminfra` child process, this makes loading
// better-sqlite3's native addon fail exactly as Node.js fails it when the addon was compiled by
// another Node.js (here 22, NODE_MODULE_VERSION 127): the same error code, and the message of
// node's src/node_binding.cc. Nothing else is changed; every other addon loads normally.
'use strict';
const loadAddon = process.dlopen;
process.dlopen = function dlopen(module, filename, ...rest) {
  if (String(filename).endsWith('better_sqlite3.node')) {
    const error = new Error(`The module '${filename}'\n` +
      'was compiled against a different Node.js version using\n' +
      `NODE_MODULE_VERSION 127. This version of Node.js requires\n` +
      `NODE_MODULE_VERSION ${process.versions.modules}. Please try re-compiling or re-installing\n` +
      'the module (for instance, using `npm rebuild` or `npm install`).');
    error.code = 'ERR_DLOPEN_FAILED';
    throw error;
  }
  return loadAddon.call(this, module, filename, ...rest);
};
